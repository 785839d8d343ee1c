// The GEMM tile pipeline as a kernel program (docs/kernels.md): per tile i, DMA-in A (and B when
// streamed) into SBUF slot i mod buffers, one fetch of both operands into the array's staging
// buffers (staging), ceil(m/tile_m) x ceil(n/tile_n) x ceil(k/tile_k) matmuls accumulating into a PSUM
// slot, a vector copy per output block into SBUF, DMA-out C. Every wait comes from the buffers
// (a slot is reused once its readers are done), as in the calibrated small-tile study
// (docs/calibration.md). Pure C++: JSON for KernelProgram::from_json.
#pragma once

#include "models/analytic/gemm_blocking.h"
#include "models/pe/gemm_workload.h"

#include <nlohmann/json.hpp>
#include <string>

namespace nctlm {

struct GemmTiling {
    uint32_t grid = 1;        // instances (one per core); >1: every tensor per instance (local stack)
    uint32_t row_blocks = 0;  // whole-GEMM mode: tile i reads A row block i / col_blocks, B column
    uint32_t col_blocks = 0;  // block i mod col_blocks; 0: each tile has its own A (and B)
};

// Throws std::invalid_argument when the shape does not split evenly over the partitions (K a
// multiple of tile_k or at most tile_k; m a multiple of tile_m or at most tile_m).
// `operand_buffers`: the array's staging buffers (pe.operand_buffers) a fetch fills in turn.
nlohmann::json gemm_pipeline_kernel(const GemmWorkload& w, uint32_t operand_buffers, const GemmTiling& t = {});
// The weight preload run before the pipeline when w.weights_resident: one DMA of B into its slot,
// with the same tensors and buffers (so the same addresses).
nlohmann::json gemm_preload_kernel(const GemmWorkload& w);

// The blocked GEMM (configs/kernels/gemm_blocked.json is this builder's output for bf16): C = A . B with A
// given transposed (a_t: K x M, K on the partitions), one instance per core over `CORES` cores,
// core pid owning rows [pid x MC, min(M, (pid + 1) x MC)) (a_t's columns, C's rows, a copy of B,
// all per instance in the core's stack). Per block of BM rows x BN columns: per block of BK of
// the contraction, the A and B blocks in (ABUFS / BBUFS copies), TK x TM by TK x TN matmuls into
// PSUM tiles (PSUM_BUFS), each tile added into an fp32 SBUF accumulator (copied on the first K
// block); then the accumulator to the output type (scalar engine) and out. Ragged dimensions: the
// last block and tile of each take what is left. Arguments: M, MC, CORES, K, N, BM, BN, BK,
// ABUFS, BBUFS, PSUM_BUFS, TM, TK, TN; `dtype` is the element type of A, B and C.
nlohmann::json gemm_blocked_kernel(Dtype dtype);
// Its arguments for one core's share `rows` of an M x K x N GEMM on `cores` cores with `b`.
void set_gemm_blocked_args(nlohmann::json& kernel, uint64_t m, uint64_t rows, uint32_t cores, uint64_t k, uint64_t n,
                           const analytic::GemmShape& tiles, const analytic::GemmBlocking& b);

} // namespace nctlm
