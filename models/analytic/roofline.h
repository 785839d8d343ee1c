// Roofline of one grouped-query-attention decode step on a chip (pure C++, no SystemC): the
// time the busiest resource needs for its share of the work, from the same parameters the
// simulation uses. Memory ceilings: each HBM stack (bytes it serves / its rate), each tile's DMA
// engines (bytes / engines x engine rate), each NoC ring link (interleaved placement). Compute
// ceilings: each tile's tensor and vector engine busy time, from models/pe/engine_timing.h
// applied to the same blocks the gqa testbench runs. No latency terms: a roofline is the floor.
#pragma once

#include "models/dma/dma_config.h"
#include "models/hbm/hbm_config.h"
#include "models/noc/noc_config.h"
#include "models/pe/pe_config.h"

#include <cstdint>
#include <string>
#include <vector>

namespace nctlm::analytic {

// One decode step: one new token, batch 1.
struct GqaShape {
    uint32_t query_heads = 0, kv_heads = 0, head_dim = 0;
    uint64_t context = 0;         // tokens in the KV cache
    uint32_t element_bytes = 2;   // bf16
    uint32_t tile_tokens = 128;   // K/V move in tiles of this many tokens (one tile of one head = 32 KiB)
    uint32_t block_tokens = 0;    // tokens per pipeline step (one DMA instruction for K, one for V)

    uint32_t group() const { return query_heads / kv_heads; }
    double tile_bytes() const { return double(tile_tokens) * head_dim * element_bytes; }
    double kv_bytes() const { return 2.0 * kv_heads * double(context) * head_dim * element_bytes; }
    double q_bytes() const { return double(query_heads) * head_dim * element_bytes; }
    double o_bytes() const { return double(query_heads) * head_dim * element_bytes; }
};

// How KV heads and tokens map onto tiles: each tile owns `heads_per_tile` heads; when there are
// more tiles than heads, `tiles_per_head` tiles split one head's tokens (split-KV across tiles).
struct GqaPlan {
    uint32_t tiles = 0, heads_per_tile = 0, tiles_per_head = 0;
    uint64_t tokens_per_slice = 0;  // tokens one tile processes for one head
};
// Throws std::invalid_argument when the heads do not divide evenly over the tiles (or vice versa).
GqaPlan gqa_plan(const GqaShape& shape, uint32_t tiles);

// Engine busy time for one block of `tokens` tokens of one KV head on one tile. Layout
// (flash-decoding packed on partitions): the block is cut into `chunks` = min(partitions / G,
// tiles in the block) chunks; the G query rows of every chunk share the partitions (rows = G x
// chunks), so one vector instruction covers every chunk at once.
//   tensor: Q.K^T  chunks x ceil(len / moving_max) matmuls (stationary Q^T: rows columns)
//           P^T    len / tile_tokens transposes (stationary rows, moving tile_tokens)
//           P.V    chunks x len / tile_tokens matmuls (stationary P^T: rows, moving head_dim)
//   vector: row max over len; rescale O (head_dim), accumulate O (2-input, head_dim), two
//           running-statistic updates (m, l: 2-input, 1 element)
//   scalar: exp(s - m) over len with the row sum; the correction exp(m_old - m_new) (1 element)
// (the same instructions as models/pe/gqa_program.h, whose simulation this roofline cross-checks)
struct GqaBlockCost {
    double tensor_ns = 0, vector_ns = 0, scalar_ns = 0;  // engine totals of the stages below
    double qk_ns = 0, softmax_ns = 0, pv_ns = 0, accumulate_ns = 0;  // the dependency chain, in order
    uint32_t chunks = 0, rows = 0, matmuls = 0, vector_ops = 0, scalar_ops = 0;
};
GqaBlockCost gqa_block_cost(const PeConfig& pe, uint32_t group, uint32_t head_dim, uint64_t tokens,
                            uint32_t tile_tokens);
// Merging the packed chunks of one head at the end of its pass (flash-decoding reduction):
// a partition-reduction matmul (stationary rows x G selection) of the rescaled O, plus the
// rescale and normalise vector ops, 1/l on the scalar engine. `partials` > 1 adds the cross-tile merge of split-KV slices.
GqaBlockCost gqa_combine_cost(const PeConfig& pe, uint32_t group, uint32_t head_dim, uint32_t chunks,
                              uint32_t partials);

struct Ceiling {
    std::string resource;  // "hbm stack 2", "tile 0 dma", "ring1_cw", "tile 0 tensor"
    double ns = 0;
};

struct GqaRoofline {
    GqaPlan plan;
    double bytes = 0;             // HBM bytes moved: K, V, Q read and O written
    double hbm_peak_ns = 0;       // bytes / chip HBM peak: the plain memory roofline
    std::vector<Ceiling> ceilings;  // the busiest of each kind: stack, dma, ring (if any), tensor, vector
    Ceiling bound;                // the largest ceiling: the roofline estimate
};
GqaRoofline gqa_roofline(const GqaShape& shape, uint32_t tiles, const DmaConfig& dma, const NocConfig& noc,
                         const HbmConfig& hbm, const PeConfig& pe, bool interleaved);

} // namespace nctlm::analytic
