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

// The flash-decoding shape of one block of `tokens` tokens (K/V tiles of `tile_tokens`): the G
// query rows of `chunks` chunks share the partitions (rows = G x chunks), each chunk `sub` tiles
// (len tokens), so one vector instruction covers every chunk at once. chunks: the largest divisor
// of the block's tiles with G x chunks <= the partitions.
struct GqaBlockShape {
    uint32_t tiles = 0, chunks = 0, sub = 0, rows = 0;
    uint64_t len = 0;  // tokens per chunk
};
GqaBlockShape gqa_block_shape(uint32_t partitions, uint32_t group, uint64_t tokens, uint32_t tile_tokens);
// A slice's last, shorter block of `tiles` K/V tiles: the full blocks' chunk length in fewer
// chunks. chunks = 0 when the tiles are not whole chunks.
GqaBlockShape gqa_tail_shape(const GqaBlockShape& full, uint32_t tiles, uint32_t group);

// Engine busy time for one block on one tile: the instructions of the GQA decode kernel
// (testbenches/gqa/gqa_kernel.h, whose simulation this roofline cross-checks) at the engine rules.
//   tensor: Q.K^T  chunks matmuls (stationary Q^T: G columns, moving len)
//           P^T    sub transposes (stationary rows, moving tile_tokens)
//           P.V    chunks x sub matmuls (stationary P^T: G columns, moving head_dim)
//   vector: negated row max over len (PSUM); a head's first block: O = P.V (head_dim); the others:
//           running max (1 element), l = l x corr + row sum (1), O x corr (head_dim), O + P.V
//           (two inputs, head_dim)
//   scalar: P^T PSUM -> SBUF (rows per partition, tile_tokens partitions) per transpose;
//           exp(s - m) over len with the row sum; the others: the correction exp(m_old - m_new)
struct GqaBlockCost {
    double tensor_ns = 0, vector_ns = 0, scalar_ns = 0;  // engine totals of the stages below
    double qk_ns = 0, softmax_ns = 0, pv_ns = 0, accumulate_ns = 0;  // the dependency chain, in order
    uint32_t chunks = 0, rows = 0, matmuls = 0, vector_ops = 0, scalar_ops = 0;
};
GqaBlockCost gqa_block_cost(const PeConfig& pe, uint32_t group, uint32_t head_dim, const GqaBlockShape& block,
                            uint32_t tile_tokens, bool first_of_head);
// The end of one head's pass (flash-decoding reduction of `rows` packed rows, `chunks` chunks):
// with several chunks, the head's max per query row (a selection matmul gathers each row's chunk
// maxima, a reduction, a matmul broadcasts it back; fp32 operands at the fp32 rate), each chunk's
// weight exp(m_c - m) (scalar), O and l weighted (vector), summed onto G rows by a selection
// matmul; then 1/l (scalar) and O / l (vector). `partials` > 1: a split-KV owner merges the other
// tiles' partials (common max, weights, weighted sum) before normalising.
GqaBlockCost gqa_combine_cost(const PeConfig& pe, uint32_t group, uint32_t head_dim, uint32_t chunks,
                              uint32_t rows, uint32_t partials);

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
