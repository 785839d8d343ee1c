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

GqaBlockCost gqa_block_cost(const PeConfig& pe, uint32_t group, uint32_t head_dim, uint64_t tokens,
                            uint32_t tile_tokens) {
    GqaBlockCost c;
    uint64_t tiles_in_block = ceil_div(tokens, tile_tokens);
    c.chunks = uint32_t(std::max<uint64_t>(1, std::min<uint64_t>(pe.sbuf_partitions / group, tiles_in_block)));
    c.rows = group * c.chunks;
    uint64_t len = ceil_div(tiles_in_block, c.chunks) * tile_tokens;  // tokens per chunk
    const Dtype bf16 = Dtype::Bf16;
    for (uint32_t k = 0; k < c.chunks; ++k)  // Q.K^T: one chunk's rows light up per matmul
        for (uint64_t done = 0; done < len; done += pe.moving_max, ++c.matmuls)
            c.qk_ns += pe.matmul_time(c.rows, uint32_t(std::min<uint64_t>(pe.moving_max, len - done)), bf16).ns;
    uint64_t sub = len / tile_tokens;
    c.pv_ns = double(sub) * pe.matmul_time(c.rows, tile_tokens, bf16).ns             // P -> P^T
              + double(c.chunks * sub) * pe.matmul_time(c.rows, head_dim, bf16).ns;  // P.V
    c.matmuls += uint32_t(sub + c.chunks * sub);
    double softmax_vector = pe.vector_op_time(uint32_t(len), 1).ns  // row max
                            + 2 * pe.vector_op_time(1, 2).ns;        // m, l updates
    c.scalar_ns = pe.scalar_op_time(uint32_t(len), c.rows).ns  // exp(s - m) with the row sum
                  + pe.scalar_op_time(1, c.rows).ns;           // exp(m_old - m_new)
    c.softmax_ns = softmax_vector + c.scalar_ns;
    c.accumulate_ns = pe.vector_op_time(head_dim, 1).ns        // O *= exp(m_old - m_new)
                      + pe.vector_op_time(head_dim, 2).ns;     // O += P.V (PSUM -> SBUF)
    c.vector_ops = 5;
    c.scalar_ops = 2;
    c.tensor_ns = c.qk_ns + c.pv_ns;
    c.vector_ns = softmax_vector + c.accumulate_ns;
    return c;
}

GqaBlockCost gqa_combine_cost(const PeConfig& pe, uint32_t group, uint32_t head_dim, uint32_t chunks,
                              uint32_t partials) {
    GqaBlockCost c;
    c.chunks = chunks;
    c.rows = group * chunks;
    // Rescale each chunk's O and l to the global max, reduce the chunks' rows onto G rows with a
    // selection matmul (O and l), normalise O by l.
    c.tensor_ns = pe.matmul_time(c.rows, head_dim, Dtype::Bf16).ns + pe.matmul_time(c.rows, 1, Dtype::Bf16).ns;
    c.matmuls = 2;
    c.vector_ns = pe.vector_op_time(1, 1).ns + 2 * pe.vector_op_time(head_dim, 2).ns;
    c.vector_ops = 3;
    c.scalar_ns = pe.scalar_op_time(1, group).ns;  // 1 / l
    c.scalar_ops = 1;
    if (partials > 1) {  // split-KV slices from other tiles: rescale and add each
        c.vector_ns += double(partials - 1) * (pe.vector_op_time(1, 2).ns + pe.vector_op_time(head_dim, 2).ns);
        c.vector_ops += 2 * (partials - 1);
    }
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
    uint64_t block = s.block_tokens ? s.block_tokens : p.tokens_per_slice;
    uint32_t chunks = 1;
    for (uint64_t done = 0; done < p.tokens_per_slice; done += block) {
        GqaBlockCost c = gqa_block_cost(pe, s.group(), s.head_dim, std::min(block, p.tokens_per_slice - done),
                                        s.tile_tokens);
        tensor += c.tensor_ns;
        vector += c.vector_ns;
        scalar += c.scalar_ns;
        chunks = std::max(chunks, c.chunks);
    }
    GqaBlockCost comb = gqa_combine_cost(pe, s.group(), s.head_dim, chunks, p.tiles_per_head);
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
