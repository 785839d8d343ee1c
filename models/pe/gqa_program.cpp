#include "models/pe/gqa_program.h"

#include <algorithm>
#include <fmt/format.h>
#include <stdexcept>

namespace nctlm {

namespace {
uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

// Semaphores of the GQA program.
struct Sem {
    static constexpr uint32_t q = 0, fetch_k = 1, fetch_v = 2, qk = 3, max = 4, exp = 5, pv = 6, acc = 7,
                              rescale = 8, reduce = 9, recip = 10, head = 11;
    static uint32_t kv_in(uint32_t slot) { return 12 + slot; }
    static uint32_t count(uint32_t buffers) { return 12 + buffers; }
};

// Per-partition SBUF/PSUM layout of one tile's program.
struct Layout {
    uint64_t kv_pp = 0;                 // one K (or V) block per partition
    uint64_t p_off = 0, o_off = 0, end = 0;  // SBUF: P, O/m/l after the K/V slots
    uint64_t scores = 0, pv = 0, transpose = 0, psum_end = 0;  // PSUM
};

Layout layout(const GqaProgramSpec& s, const PeConfig& pe, uint64_t max_tokens) {
    Layout l;
    uint32_t elt = dtype_bytes(s.dtype);
    GqaBlockShape b = gqa_block_shape(pe, s.group, max_tokens, s.tile_tokens);
    // K^T has head_dim on the partitions, V has tile_tokens: the larger per-partition share.
    uint64_t k_pp = ceil_div(max_tokens * s.head_dim * elt, s.head_dim);
    uint64_t v_pp = ceil_div(max_tokens * s.head_dim * elt, std::min(s.tile_tokens, pe.sbuf_partitions));
    l.kv_pp = std::max(k_pp, v_pp);
    l.p_off = 2 * l.kv_pp * s.buffers;
    l.o_off = l.p_off + b.len * elt;
    l.end = l.o_off + uint64_t(s.heads) * (s.head_dim + 2) * 4;  // O, m, l per head (fp32)
    l.scores = 0;                                  // two score buffers (fp32)
    l.pv = 2 * b.len * 4;                          // two P.V buffers
    l.transpose = l.pv + 2 * uint64_t(s.head_dim) * 4;  // P^T
    l.psum_end = l.transpose + uint64_t(b.rows) * 4;
    return l;
}

uint64_t max_block(const GqaProgramSpec& s) {
    uint64_t m = 0;
    for (auto& b : s.blocks)
        m = std::max(m, b.tokens);
    return m;
}
} // namespace

GqaBlockShape gqa_block_shape(const PeConfig& pe, uint32_t group, uint64_t tokens, uint32_t tile_tokens) {
    GqaBlockShape b;
    uint64_t tiles = ceil_div(tokens, tile_tokens);
    b.chunks = uint32_t(std::max<uint64_t>(1, std::min<uint64_t>(pe.sbuf_partitions / std::max(1u, group), tiles)));
    b.rows = group * b.chunks;
    b.len = ceil_div(tiles, b.chunks) * tile_tokens;
    return b;
}

std::string gqa_check(const GqaProgramSpec& s, const PeConfig& pe) {
    if (s.group > pe.sbuf_partitions || s.group > pe.tensor_cols)
        return fmt::format("a group of {} query heads per KV head does not fit the {} partitions / {} array "
                           "columns (at most {})",
                           s.group, pe.sbuf_partitions, pe.tensor_cols, std::min(pe.sbuf_partitions, pe.tensor_cols));
    if (s.head_dim > pe.tensor_rows)
        return fmt::format("head_dim={} exceeds the array's {} rows (pe.tensor_rows)", s.head_dim, pe.tensor_rows);
    if (s.tile_tokens > pe.tensor_rows || s.tile_tokens > pe.sbuf_partitions)
        return fmt::format("tile_tokens={} exceeds the {} rows a P.V matmul contracts over (at most {})",
                           s.tile_tokens, pe.tensor_rows, std::min(pe.tensor_rows, pe.sbuf_partitions));
    uint64_t tokens = max_block(s);
    Layout l = layout(s, pe, tokens);
    if (l.end > pe.sbuf_partition_bytes) {
        uint64_t other = l.end - 2 * l.kv_pp * s.buffers;
        uint64_t fit = pe.sbuf_partition_bytes > other ? (pe.sbuf_partition_bytes - other) / (2 * l.kv_pp) : 0;
        return fmt::format("workload.buffers={} K/V buffers of {} tokens (workload.block_tokens) need {} per SBUF "
                           "partition but pe.sbuf_partition_bytes={} (at most {} buffers of this block fit)",
                           s.buffers, tokens, format_bytes(l.end), format_bytes(pe.sbuf_partition_bytes), fit);
    }
    if (l.psum_end > pe.psum_partition_bytes)
        return fmt::format("a block of {} tokens needs {} per PSUM partition (scores, P.V, P^T) but "
                           "pe.psum_partition_bytes={}: use fewer tokens per block (workload.block_tokens) or more "
                           "chunks (a smaller group)",
                           tokens, format_bytes(l.psum_end), format_bytes(pe.psum_partition_bytes));
    return "";
}

Program make_gqa_program(const GqaProgramSpec& s, const PeConfig& pe) {
    std::string problem = gqa_check(s, pe);
    if (!problem.empty())
        throw std::invalid_argument(problem);
    const uint32_t B = s.buffers, elt = dtype_bytes(s.dtype), G = s.group, D = s.head_dim;
    const Layout L = layout(s, pe, max_block(s));
    Program p;
    p.semaphores = Sem::count(B);
    auto& out = p.instructions;
    auto make = [](Op op, Unit unit, Stage stage) {
        Instruction i;
        i.op = op;
        i.unit = unit;
        i.stage = stage;
        return i;
    };
    auto wait = [](Instruction& i, uint32_t sem, int64_t value) {
        if (value > 0)
            i.waits.push_back({sem, uint64_t(value)});
    };
    // An evacuation-stage op reading PSUM (and SBUF) and writing `wr` bytes at `offset`.
    auto evacuate = [&](Op op, Unit unit, uint32_t n, uint32_t inputs, uint32_t parts, uint64_t psum,
                        uint64_t sbuf_rd, uint64_t wr, uint64_t offset) {
        Instruction i = make(op, unit, Stage::Evacuate);
        i.n_free = n;
        i.inputs = inputs;
        i.partitions = parts;
        i.psum_bytes = psum;
        i.sbuf_read_bytes = sbuf_rd;
        i.bytes = wr;
        i.offset = offset;
        return i;
    };
    auto vec = [&](uint32_t n, uint32_t inputs, uint32_t parts, uint64_t psum, uint64_t sbuf_rd, uint64_t wr,
                   uint64_t offset) {
        return evacuate(Op::VectorOp, Unit::Vector, n, inputs, parts, psum, sbuf_rd, wr, offset);
    };
    auto act = [&](uint32_t n, uint32_t parts, uint64_t psum, uint64_t sbuf_rd, uint64_t wr, uint64_t offset) {
        return evacuate(Op::Activation, Unit::Scalar, n, Instruction{}.inputs, parts, psum, sbuf_rd, wr, offset);
    };
    // A matmul whose result lands on out_parts PSUM partitions, `free` fp32 values each.
    auto mm = [&](uint32_t stationary, uint32_t moving, uint32_t k_rows, uint32_t out_parts, uint32_t free,
                  uint64_t psum_offset) {
        Instruction i = make(Op::Matmul, Unit::Tensor, Stage::Gemm);
        i.n_stationary = stationary;
        i.n_moving = moving;
        i.k_rows = k_rows;
        i.dtype = s.dtype;
        i.partitions = out_parts;
        i.psum_bytes = uint64_t(out_parts) * free * 4;
        i.offset = psum_offset;
        return i;
    };

    // Q for every head of the tile.
    Instruction q = make(Op::DmaRead, Unit::DmaIn, Stage::DmaIn);
    q.address = s.q_address;
    q.bytes = uint64_t(s.heads) * G * D * elt;
    q.partitions = D;
    q.signal = int(Sem::q);
    out.push_back(q);

    const size_t n = s.blocks.size();
    uint32_t dma_queue = 0;
    // K/V loads: slot j mod B is free once block j - B's P.V has read it.
    for (size_t j = 0; j < n; ++j) {
        const GqaBlock& b = s.blocks[j];
        for (int v = 0; v < 2; ++v) {
            Instruction d = make(Op::DmaRead, Unit::DmaIn, Stage::DmaIn);
            d.address = v ? b.v_address : b.k_address;
            d.bytes = b.tokens * D * elt;
            d.partitions = v ? std::min(s.tile_tokens, pe.sbuf_partitions) : D;
            d.offset = (2 * (j % B) + v) * L.kv_pp;
            d.contiguous = true;
            d.descriptor_bytes = s.kv_descriptor_bytes;
            d.queue = dma_queue;
            dma_queue += uint32_t(ceil_div(d.bytes, s.kv_descriptor_bytes ? s.kv_descriptor_bytes : d.bytes));
            wait(d, Sem::pv, int64_t(j) - B + 1);
            d.signal = int(Sem::kv_in(uint32_t(j % B)));
            out.push_back(d);
        }
    }

    auto kv_ready = [&](size_t j) { return int64_t(2 * (j / B + 1)); };
    // Q.K^T of block j with its fetch and the softmax that follows it.
    auto qk = [&](size_t j) {
        const GqaBlock& b = s.blocks[j];
        GqaBlockShape sh = gqa_block_shape(pe, G, b.tokens, s.tile_tokens);
        Instruction fk = make(Op::Fetch, Unit::Fetch, Stage::Fetch);
        fk.bytes = b.tokens * D * elt;
        fk.partitions = D;
        fk.offset = 2 * (j % B) * L.kv_pp;
        wait(fk, Sem::kv_in(uint32_t(j % B)), kv_ready(j));
        wait(fk, Sem::qk, int64_t(j) - 1);  // two staging buffers
        fk.signal = int(Sem::fetch_k);
        out.push_back(fk);
        uint64_t score_off = (j % 2) * sh.len * 4;
        size_t first = out.size();
        for (uint32_t c = 0; c < sh.chunks; ++c)
            for (uint64_t done = 0; done < sh.len; done += pe.moving_max)
            {
                uint32_t moving = uint32_t(std::min<uint64_t>(pe.moving_max, sh.len - done));
                out.push_back(mm(sh.rows, moving, D, sh.rows, moving, score_off + done * 4));
            }
        wait(out[first], Sem::fetch_k, int64_t(j) + 1);
        wait(out[first], Sem::q, 1);
        wait(out[first], Sem::exp, int64_t(j) - 1);  // score buffer j mod 2: block j-2's exp has read it
        out.back().signal = int(Sem::qk);
        // Softmax: row max (Vector, PSUM read), running max (Vector), exp with the row sum in the
        // reduce registers (Scalar, PSUM read, P to SBUF), the correction exp(m - m_new) (Scalar),
        // the running sum (Vector).
        uint32_t len = uint32_t(sh.len);
        Instruction vmax = vec(len, 1, sh.rows, uint64_t(sh.rows) * len * 4, 0, uint64_t(sh.rows) * 4, L.o_off);
        wait(vmax, Sem::qk, int64_t(j) + 1);
        out.push_back(vmax);
        Instruction mnew = vec(1, 2, sh.rows, 0, uint64_t(sh.rows) * 8, uint64_t(sh.rows) * 4, L.o_off);
        mnew.signal = int(Sem::max);
        out.push_back(mnew);
        Instruction ex = act(len, sh.rows, uint64_t(sh.rows) * len * 4, 0, uint64_t(sh.rows) * len * elt, L.p_off);
        wait(ex, Sem::max, int64_t(j) + 1);
        out.push_back(ex);
        Instruction corr = act(1, sh.rows, 0, uint64_t(sh.rows) * 8, uint64_t(sh.rows) * 4, L.o_off);
        corr.signal = int(Sem::exp);
        out.push_back(corr);
        Instruction lsum = vec(1, 2, sh.rows, 0, uint64_t(sh.rows) * 8, uint64_t(sh.rows) * 4, L.o_off);
        wait(lsum, Sem::exp, int64_t(j) + 1);
        out.push_back(lsum);
    };
    // P^T and P.V of block j, then the O update.
    auto pv = [&](size_t j) {
        const GqaBlock& b = s.blocks[j];
        GqaBlockShape sh = gqa_block_shape(pe, G, b.tokens, s.tile_tokens);
        uint32_t tt = std::min(s.tile_tokens, pe.sbuf_partitions);
        Instruction fv = make(Op::Fetch, Unit::Fetch, Stage::Fetch);
        fv.bytes = b.tokens * D * elt;
        fv.partitions = tt;
        fv.offset = (2 * (j % B) + 1) * L.kv_pp;
        wait(fv, Sem::kv_in(uint32_t(j % B)), kv_ready(j));
        wait(fv, Sem::pv, int64_t(j) - 1);
        fv.signal = int(Sem::fetch_v);
        out.push_back(fv);
        uint64_t sub = sh.len / s.tile_tokens;
        size_t first = out.size();
        for (uint64_t t = 0; t < sub; ++t)  // P -> P^T through the array (identity matmul)
            out.push_back(mm(sh.rows, s.tile_tokens, sh.rows, tt, sh.rows, L.transpose));
        for (uint32_t c = 0; c < sh.chunks; ++c)
            for (uint64_t t = 0; t < sub; ++t)
                out.push_back(mm(sh.rows, D, tt, sh.rows, D, L.pv + (j % 2) * D * 4));
        wait(out[first], Sem::exp, int64_t(j) + 1);
        wait(out[first], Sem::fetch_v, int64_t(j) + 1);
        wait(out[first], Sem::acc, int64_t(j) - 1);  // P.V buffer j mod 2: block j-2's update has read it
        out.back().signal = int(Sem::pv);
        Instruction scale = vec(D, 1, sh.rows, 0, uint64_t(sh.rows) * D * 4, uint64_t(sh.rows) * D * 4, L.o_off);
        wait(scale, Sem::pv, int64_t(j) + 1);
        out.push_back(scale);
        Instruction add = vec(D, 2, sh.rows, uint64_t(sh.rows) * D * 4, uint64_t(sh.rows) * D * 4,
                              uint64_t(sh.rows) * D * 4, L.o_off);
        add.signal = int(Sem::acc);
        out.push_back(add);
    };
    // After a head's last block: merge the chunks onto G rows, normalise, write out.
    uint32_t heads_done = 0;
    auto combine = [&](size_t last, uint32_t head) {
        GqaBlockShape sh = gqa_block_shape(pe, G, s.blocks[last].tokens, s.tile_tokens);
        uint32_t h = ++heads_done;
        Instruction rescale = vec(1, 1, sh.rows, 0, uint64_t(sh.rows) * 4, uint64_t(sh.rows) * 4, L.o_off);
        wait(rescale, Sem::acc, int64_t(last) + 1);
        rescale.signal = int(Sem::rescale);
        out.push_back(rescale);
        Instruction r1 = mm(sh.rows, D, sh.rows, G, D, L.pv), r2 = mm(sh.rows, 1, sh.rows, G, 1, L.transpose);
        wait(r1, Sem::rescale, h);
        r2.signal = int(Sem::reduce);
        out.push_back(r1);
        out.push_back(r2);
        Instruction recip = act(1, G, 4 * uint64_t(G), 0, 4 * uint64_t(G), L.o_off);
        wait(recip, Sem::reduce, h);
        recip.signal = int(Sem::recip);
        out.push_back(recip);
        Instruction n1 = vec(D, 2, G, uint64_t(G) * D * 4, uint64_t(G) * 4, uint64_t(G) * D * 4, L.o_off);
        Instruction n2 = vec(D, 2, G, 0, uint64_t(G) * D * 4 * 2, uint64_t(G) * D * elt, L.o_off);
        wait(n1, Sem::recip, h);
        n2.signal = int(Sem::head);
        out.push_back(n1);
        out.push_back(n2);
        if (s.keep_result)
            return;
        Instruction o = make(Op::DmaWrite, Unit::DmaOut, Stage::WriteBack);
        o.address = s.out_address.at(head);
        o.bytes = s.partial_out ? uint64_t(G) * (D + 2) * 4 : uint64_t(G) * D * elt;
        o.partitions = G;
        o.queue = 1;
        wait(o, Sem::head, h);
        out.push_back(o);
    };
    // Tensor order: QK(j), PV(j-1), QK(j+1), ... one block of software pipelining within a head;
    // it needs two K/V buffers (block j+1 in flight while block j waits for its P.V).
    const bool pipelined = B >= 2;
    bool pending = false;
    for (size_t j = 0; j < n; ++j) {
        qk(j);
        if (pending)
            pv(j - 1);
        pending = true;
        if (!pipelined) {
            pv(j);
            pending = false;
        }
        bool head_end = j + 1 == n || s.blocks[j + 1].head != s.blocks[j].head;
        if (head_end) {
            if (pending)
                pv(j);
            pending = false;
            combine(j, s.blocks[j].head);
        }
    }
    return p;
}

Program make_gqa_merge_program(uint32_t group, uint32_t head_dim, Dtype dtype,
                               const std::vector<uint64_t>& partial_addresses, uint64_t out_address) {
    Program p;
    p.semaphores = 3;  // 0: partials in, 1: merged, 2: normalised
    const uint64_t G = group, D = head_dim, partial = G * (D + 2) * 4;
    for (uint64_t a : partial_addresses) {
        Instruction d;
        d.op = Op::DmaRead;
        d.unit = Unit::DmaIn;
        d.stage = Stage::DmaIn;
        d.address = a;
        d.bytes = partial;
        d.partitions = group;
        d.signal = 0;
        p.instructions.push_back(d);
    }
    // Per partial: rescale to the common max (m, l), add its O.
    for (size_t k = 0; k < partial_addresses.size(); ++k)
        for (int step = 0; step < 2; ++step) {
            Instruction v;
            v.op = Op::VectorOp;
            v.unit = Unit::Vector;
            v.stage = Stage::Evacuate;
            v.n_free = step ? head_dim : 1;
            v.inputs = 2;
            v.partitions = group;
            v.sbuf_read_bytes = G * (step ? D : 1) * 4 * 2;
            v.bytes = G * (step ? D : 1) * 4;
            if (step == 0)
                v.waits.push_back({0, k + 1});
            p.instructions.push_back(v);
        }
    p.instructions.back().signal = 1;
    Instruction recip;
    recip.op = Op::Activation;
    recip.unit = Unit::Scalar;
    recip.stage = Stage::Evacuate;
    recip.n_free = head_dim;  // O x 1/l
    recip.partitions = group;
    recip.sbuf_read_bytes = G * D * 4;
    recip.bytes = G * D * dtype_bytes(dtype);
    recip.waits.push_back({1, 1});
    recip.signal = 2;
    p.instructions.push_back(recip);
    Instruction o;
    o.op = Op::DmaWrite;
    o.unit = Unit::DmaOut;
    o.stage = Stage::WriteBack;
    o.address = out_address;
    o.bytes = G * D * dtype_bytes(dtype);
    o.partitions = group;
    o.queue = 1;
    o.waits.push_back({2, 1});
    p.instructions.push_back(o);
    return p;
}

} // namespace nctlm
