#include "models/analytic/roofline.h"

#include "models/noc/topology.h"

#include <algorithm>
#include <fmt/format.h>
#include <stdexcept>

namespace nctlm::analytic {

namespace {
uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }
} // namespace

GqaPlan gqa_plan(const GqaShape& s, uint32_t tiles) {
    if (s.kv_heads == 0 || s.query_heads % s.kv_heads != 0)
        throw std::invalid_argument(
            fmt::format("query_heads ({}) must be a multiple of kv_heads ({})", s.query_heads, s.kv_heads));
    GqaPlan p;
    p.tiles = tiles;
    if (s.kv_heads >= tiles) {
        if (s.kv_heads % tiles != 0)
            throw std::invalid_argument(fmt::format("{} KV heads do not divide over {} tiles", s.kv_heads, tiles));
        p.heads_per_tile = s.kv_heads / tiles;
        p.tiles_per_head = 1;
    } else {
        if (tiles % s.kv_heads != 0)
            throw std::invalid_argument(fmt::format("{} tiles do not divide over {} KV heads", tiles, s.kv_heads));
        p.heads_per_tile = 1;
        p.tiles_per_head = tiles / s.kv_heads;
    }
    if (s.context % (uint64_t(s.tile_tokens) * p.tiles_per_head) != 0)
        throw std::invalid_argument(fmt::format("context {} does not split into {} slices of whole {}-token tiles",
                                                s.context, p.tiles_per_head, s.tile_tokens));
    p.tokens_per_slice = s.context / p.tiles_per_head;
    return p;
}

GqaBlockShape gqa_block_shape(uint32_t partitions, uint32_t group, uint64_t tokens, uint32_t tile_tokens) {
    GqaBlockShape b;
    b.tiles = uint32_t(ceil_div(tokens, std::max(1u, tile_tokens)));
    uint32_t most = std::max(1u, partitions / std::max(1u, group));
    b.chunks = 1;
    for (uint32_t c = std::min(most, b.tiles); c >= 1; --c)
        if (b.tiles % c == 0) {
            b.chunks = c;
            break;
        }
    b.sub = b.tiles / std::max(1u, b.chunks);
    b.rows = group * b.chunks;
    b.len = uint64_t(b.sub) * tile_tokens;
    return b;
}

GqaBlockShape gqa_tail_shape(const GqaBlockShape& full, uint32_t tiles, uint32_t group) {
    GqaBlockShape t = full;
    t.tiles = tiles;
    t.chunks = full.sub && tiles % full.sub == 0 ? tiles / full.sub : 0;
    t.rows = t.chunks * group;
    return t;
}

GqaBlockCost gqa_block_cost(const PeConfig& pe, uint32_t group, uint32_t head_dim, const GqaBlockShape& b,
                            uint32_t tile_tokens, bool first) {
    GqaBlockCost c;
    c.chunks = b.chunks;
    c.rows = b.rows;
    const Dtype bf16 = Dtype::Bf16;
    const uint32_t len = uint32_t(b.len);
    c.qk_ns = b.chunks * pe.matmul_time(group, len, bf16).ns;  // one chunk's G rows per matmul
    c.pv_ns = b.sub * pe.matmul_time(b.rows, tile_tokens, bf16).ns              // P -> P^T
              + double(b.chunks) * b.sub * pe.matmul_time(group, head_dim, bf16).ns;  // P.V
    c.matmuls = b.chunks + b.sub + b.chunks * b.sub;
    double softmax_vector = pe.vector_op_time(len, 1).ns;  // negated row max (PSUM)
    double exp_ns = pe.scalar_op_time(len, b.rows).ns;     // exp(s - m) with the row sum
    double copy_ns = b.sub * pe.scalar_op_time(b.rows, tile_tokens).ns;  // P^T to SBUF
    c.vector_ops = 1;
    c.scalar_ops = 1 + b.sub;
    if (first) {
        c.accumulate_ns = pe.vector_op_time(head_dim, 1).ns;  // O = P.V
        c.vector_ops += 1;
        c.scalar_ns = exp_ns + copy_ns;
    } else {
        softmax_vector += 2 * pe.vector_op_time(1, 1).ns;          // running max, l update
        c.accumulate_ns = pe.vector_op_time(head_dim, 1).ns         // O x corr
                          + pe.vector_op_time(head_dim, 2).ns;      // O + P.V
        c.vector_ops += 4;
        double corr_ns = pe.scalar_op_time(1, b.rows).ns;           // exp(m_old - m_new)
        c.scalar_ns = exp_ns + corr_ns + copy_ns;
        exp_ns += corr_ns;
        c.scalar_ops += 1;
    }
    c.softmax_ns = softmax_vector + exp_ns;
    c.tensor_ns = c.qk_ns + c.pv_ns;
    c.vector_ns = softmax_vector + c.accumulate_ns;
    return c;
}

GqaBlockCost gqa_combine_cost(const PeConfig& pe, uint32_t group, uint32_t head_dim, uint32_t chunks, uint32_t rows,
                              uint32_t partials) {
    GqaBlockCost c;
    c.chunks = chunks;
    c.rows = rows;
    const Dtype fp32 = Dtype::Fp32;
    if (chunks > 1) {
        c.tensor_ns = pe.matmul_time(group, chunks, fp32).ns         // gather the chunk maxima
                      + pe.matmul_time(rows, 1, fp32).ns             // broadcast the max back
                      + pe.matmul_time(group, head_dim + 1, fp32).ns;  // sum O and l onto G rows
        c.matmuls = 3;
        c.vector_ns = 2 * pe.vector_op_time(chunks, 1).ns + pe.vector_op_time(head_dim + 1, 1).ns;
        c.vector_ops = 3;
        c.scalar_ns = pe.scalar_op_time(1, rows).ns;  // the chunks' weights
        c.scalar_ops = 1;
    }
    if (partials > 1) {  // split-KV owner: the common max, weights, weighted sum of the partials
        c.vector_ns += pe.vector_op_time(partials - 1, 1).ns + pe.vector_op_time(1, 1).ns +
                       pe.vector_op_time(head_dim + 1, 1).ns +
                       double(partials - 1) * (pe.vector_op_time(head_dim + 1, 1).ns + pe.vector_op_time(head_dim + 1, 2).ns);
        c.vector_ops += 3 + 2 * (partials - 1);
        c.scalar_ns += pe.scalar_op_time(1, group).ns + pe.scalar_op_time(partials - 1, group).ns;
        c.scalar_ops += 2;
    }
    c.vector_ns += pe.vector_op_time(head_dim, 1).ns;  // O / l
    c.scalar_ns += pe.scalar_op_time(1, group).ns;     // 1 / l
    c.vector_ops += 1;
    c.scalar_ops += 1;
    return c;
}

GqaRoofline gqa_roofline(const GqaShape& s, uint32_t tiles, const DmaConfig& dma, const NocConfig& noc,
                         const HbmConfig& hbm, const PeConfig& pe, bool interleaved) {
    GqaRoofline r;
    r.plan = gqa_plan(s, tiles);
    const GqaPlan& p = r.plan;
    r.bytes = s.kv_bytes() + s.q_bytes() + s.o_bytes();
    double peak = hbm.stack_bandwidth().bytes_per_s * hbm.stacks;
    r.hbm_peak_ns = r.bytes / peak * 1e9;

    // Bytes per tile (K and V of its slices, Q in, O out) and where they come from.
    double tile_bytes = r.bytes / tiles;
    Topology topo(tiles, hbm.stacks);
    std::vector<double> stack_bytes(hbm.stacks, 0), link_bytes(topo.links(), 0);
    for (uint32_t t = 0; t < tiles; ++t)
        for (uint32_t st = 0; st < hbm.stacks; ++st) {
            double b = interleaved ? tile_bytes / hbm.stacks : (st == topo.router_of_tile(t) ? tile_bytes : 0);
            if (b == 0)
                continue;
            stack_bytes[st] += b;
            for (uint32_t l : topo.response_route(st, t))
                link_bytes[l] += b;
        }
    auto busiest = [](const std::vector<double>& v) { return size_t(std::max_element(v.begin(), v.end()) - v.begin()); };
    size_t st = busiest(stack_bytes);
    r.ceilings.push_back({fmt::format("hbm stack {}", st), stack_bytes[st] / hbm.stack_bandwidth().bytes_per_s * 1e9});
    r.ceilings.push_back({"tile dma engines", tile_bytes / dma.data_bandwidth().bytes_per_s * 1e9});
    std::vector<double> link_ns(topo.links());
    for (size_t l = 0; l < topo.links(); ++l) {
        LinkKind k = topo.kind(l);
        Bandwidth bw = (k == LinkKind::RingClockwise || k == LinkKind::RingCounter) ? noc.ring_bandwidth
                                                                                     : noc.link_bandwidth;
        link_ns[l] = link_bytes[l] / bw.bytes_per_s * 1e9;
    }
    size_t l = busiest(link_ns);
    r.ceilings.push_back({"noc " + topo.link_name(l), link_ns[l]});

    // Compute: every tile runs the same blocks.
    double tensor = 0, vector = 0, scalar = 0;
    uint64_t block = s.block_tokens ? std::min<uint64_t>(s.block_tokens, p.tokens_per_slice) : p.tokens_per_slice;
    GqaBlockShape full = gqa_block_shape(pe.sbuf_partitions, s.group(), block, s.tile_tokens);
    uint32_t rows = full.rows;
    for (uint64_t done = 0; done < p.tokens_per_slice; done += block) {
        uint64_t tokens = std::min(block, p.tokens_per_slice - done);
        GqaBlockShape b = tokens == block ? full
                                          : gqa_tail_shape(full, uint32_t(ceil_div(tokens, s.tile_tokens)), s.group());
        if (b.chunks == 0)  // not whole chunks: the kernel refuses it; cost it as full blocks
            b = full;
        if (done == 0)
            rows = b.rows;
        GqaBlockCost c = gqa_block_cost(pe, s.group(), s.head_dim, b, s.tile_tokens, done == 0);
        tensor += c.tensor_ns;
        vector += c.vector_ns;
        scalar += c.scalar_ns;
    }
    GqaBlockCost comb = gqa_combine_cost(pe, s.group(), s.head_dim, full.chunks, rows, p.tiles_per_head);
    tensor = (tensor + comb.tensor_ns) * p.heads_per_tile;
    vector = (vector + comb.vector_ns) * p.heads_per_tile;
    scalar = (scalar + comb.scalar_ns) * p.heads_per_tile;
    r.ceilings.push_back({"tile tensor engine", tensor});
    r.ceilings.push_back({"tile vector engine", vector});
    r.ceilings.push_back({"tile scalar engine", scalar});
    r.bound = *std::max_element(r.ceilings.begin(), r.ceilings.end(),
                                [](const Ceiling& a, const Ceiling& b) { return a.ns < b.ns; });
    return r;
}

} // namespace nctlm::analytic
