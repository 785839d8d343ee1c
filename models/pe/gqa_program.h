// GQA decode attention as a PE program (pure C++): one tile's share of one decode step, run by the
// PE's units like the GEMM pipeline (in-order queues, counting semaphores). Flash-decoding layout:
// a block of `tokens` tokens of one KV head is cut into `chunks` chunks whose G query rows share
// the partitions (rows = G x chunks), so one engine instruction covers every chunk at once.
// Per block j (K/V buffer slot j mod buffers):
//   DmaIn    K, V (contiguous, one descriptor per K/V tile, round robin over the DMA queues)
//   Fetch    K -> array, V -> array (SBUF read through its ports)
//   Tensor   Q.K^T: chunks x ceil(len / moving_max) matmuls into PSUM (scores, fp32)
//   Vector   row max of the scores (PSUM read); m_new = max(m, block max)
//   Scalar   P = exp(s - m_new) with the row sum in its reduce registers (PSUM read, SBUF write);
//            corr = exp(m - m_new)
//   Vector   l = l x corr + row sum
//   Tensor   P^T: len / tile_tokens transposes; P.V: chunks x len / tile_tokens matmuls into PSUM
//   Vector   O *= corr; O += P.V (PSUM read)
// With two or more buffers the tensor queue runs Q.K^T of block j+1 before P.V of block j (software
// pipelining). After a head's last block: rescale the chunks (Vector), reduce them onto G rows
// with two selection matmuls (Tensor), 1/l (Scalar), normalise O (Vector), write O (or, on a
// split-KV partner tile, the partial O with its m and l) to HBM. A split head's owner merges the
// partners' partials in a second program (make_gqa_merge_program).
#pragma once

#include "models/pe/instruction.h"
#include "models/pe/pe_config.h"

#include <cstdint>
#include <string>
#include <vector>

namespace nctlm {

struct GqaBlock {
    uint32_t head = 0;    // index among the tile's heads
    uint64_t tokens = 0;  // tokens in this block
    uint64_t k_address = 0, v_address = 0;
};

struct GqaProgramSpec {
    uint32_t group = 0, head_dim = 0, tile_tokens = 0, buffers = 0, heads = 0;
    Dtype dtype = Dtype::Bf16;
    uint64_t q_address = 0;
    std::vector<GqaBlock> blocks;       // in order, grouped by head
    std::vector<uint64_t> out_address;  // per head: O (or the partial) in HBM
    bool partial_out = false;           // write the fp32 partial O with m, l (split-KV partner)
    bool keep_result = false;           // split-KV owner: leave O in SBUF for the merge program
    uint64_t kv_descriptor_bytes = 0;   // one K/V tile
};

// The flash-decoding shape of one block (shared with the analytic roofline's block cost).
struct GqaBlockShape {
    uint32_t chunks = 0, rows = 0;
    uint64_t len = 0;  // tokens per chunk (whole K/V tiles)
};
GqaBlockShape gqa_block_shape(const PeConfig& pe, uint32_t group, uint64_t tokens, uint32_t tile_tokens);

// Checks the shape against the PE (rows on the array and partitions, scores and P.V in PSUM, K/V
// buffers in SBUF); "" or what does not fit and what would.
std::string gqa_check(const GqaProgramSpec& s, const PeConfig& pe);

Program make_gqa_program(const GqaProgramSpec& s, const PeConfig& pe);
// Split-KV owner: read `partials` - 1 partials from `partial_addresses`, rescale and add each,
// normalise, write O to `out_address`.
Program make_gqa_merge_program(uint32_t group, uint32_t head_dim, Dtype dtype,
                               const std::vector<uint64_t>& partial_addresses, uint64_t out_address);

} // namespace nctlm
