// GQA decode attention as a kernel program (docs/kernels.md, docs/models/chip.md): one decode step
// of every tile's KV heads, one instance per tile. Flash decoding packed on partitions: a block of
// `block_tokens` tokens of one KV head is cut into `chunks` chunks of `len` tokens whose G query
// rows share the partitions (rows = G x chunks), so one vector/scalar instruction covers every
// chunk. Per block b (K/V slot b mod buffers):
//   DMA      K^T and V pages (one contiguous run each, one descriptor per tile_tokens tile)
//   fetch    K, V -> the array's staging buffers (SBUF read through its ports)
//   tensor   Q.K^T: one matmul per chunk (stationary Q^T: G columns, written to the chunk's G
//            PSUM partitions; moving: the chunk's tokens)
//   vector   negated row max of the scores (PSUM read); running max
//   scalar   P = exp(s - m) with the row sum (P to SBUF); the correction exp(m_old - m_new)
//   vector   l = l x corr + row sum
//   tensor   P^T (transposes into PSUM), vector P^T PSUM -> SBUF (the array reads SBUF only)
//   tensor   P.V: one matmul per chunk (stationary P^T's G columns of the chunk)
//   vector   O = O x corr + P.V (PSUM read)
// A head's first block initializes m, l and O instead of updating them. With two or more buffers
// the tensor queue runs Q.K^T of block b before P.V of block b - 1 (software pipelining, across
// heads too). After a head's last block the chunks merge: the global max per query row (a
// selection matmul that gathers each row's chunk maxima, a reduction, a matmul that broadcasts it
// back), each chunk's O and l rescaled, summed onto G rows by a selection matmul (fp32 operands:
// fp32 rate), O / l, O written. Split KV over tiles: partners write their partial (O, l, -max,
// fp32); after a grid barrier each owner reads its partners' partials and merges them.
// Pure C++: JSON for KernelProgram::from_json.
#pragma once

#include "models/analytic/roofline.h"
#include "models/pe/engine_timing.h"
#include "models/pe/pe_config.h"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace nctlm {

struct GqaKernelSpec {
    uint32_t group = 0, head_dim = 0, tile_tokens = 0, block_tokens = 0, buffers = 0;
    uint32_t heads = 0;          // KV heads per tile
    uint64_t tokens = 0;         // tokens of one head on one tile (its slice)
    uint32_t tiles = 1;          // instances (one per tile)
    uint32_t tiles_per_head = 1; // > 1: split KV over tiles; instance pid's owner is pid - pid % tiles_per_head
    Dtype dtype = Dtype::Bf16;
    uint32_t operand_buffers = 2;  // pe.operand_buffers: staging copies for K and for V
    // HBM placement (bytes from the start of the tile's stack, or of the interleaved window for K/V):
    // tile t's K/V at t x kv_region, its Q at misc_base + t x misc_region, O at + 64 KiB, its
    // partial at + 128 KiB.
    bool interleaved = false;
    uint64_t kv_region = 0, misc_base = 0, misc_region = 0;
};

// "" or what does not fit (array, SBUF, PSUM) and what would, naming the workload key.
std::string gqa_kernel_check(const GqaKernelSpec& s, const PeConfig& pe);

// Throws std::invalid_argument with gqa_kernel_check's message.
nlohmann::json gqa_decode_kernel(const GqaKernelSpec& s, const PeConfig& pe);

} // namespace nctlm
