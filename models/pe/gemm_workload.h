// A GEMM tile workload: `workload.*` in configs/workloads/gemm_*.yaml. Each of `tiles` tiles is an
// M x K x N product C = A . B; A (M x K) streams in per tile, B (K x N) is the weight operand.
// Pure C++: the PE's program generator and the analytic model read the same struct.
#pragma once

#include "models/common/config.h"
#include "models/pe/engine_timing.h"
#include "models/pe/pe_config.h"

#include <algorithm>

namespace nctlm {

struct GemmWorkload {
    uint32_t m = 0, k = 0, n = 0;
    Dtype dtype = Dtype::Bf16;
    uint32_t tiles = 0;
    uint32_t tile_m = 0, tile_k = 0, tile_n = 0; // one matmul instruction: stationary tile_k x tile_m,
                                                 // moving tile_k x tile_n
    uint32_t buffers = 0;                        // N-buffering of SBUF input/output and PSUM slots
    bool weights_resident = true;                // B loaded once before the pipeline, else per tile
    std::string cores;                           // "" : m x k x n is one tile streamed `tiles` times;
                                                 // 1 | all | N: m x k x n is the whole GEMM over cores

    uint64_t a_bytes() const { return uint64_t(m) * k * dtype_bytes(dtype); }
    uint64_t b_bytes() const { return uint64_t(k) * n * dtype_bytes(dtype); }
    uint64_t c_bytes() const { return uint64_t(m) * n * dtype_bytes(dtype); }
    uint64_t in_bytes() const { return a_bytes() + (weights_resident ? 0 : b_bytes()); } // DMA-in per tile
    uint64_t fetch_bytes() const { return a_bytes() + b_bytes(); }    // SBUF -> array per tile: both operands
    uint32_t fetch_partitions() const { return std::min(k, tile_k); } // K lies on the partitions
    // Blocks of each dimension: sizes of the full blocks and the remainder.
    static uint32_t blocks(uint32_t dim, uint32_t tile) { return (dim + tile - 1) / tile; }
    static uint32_t block_size(uint32_t dim, uint32_t tile, uint32_t i) {
        return std::min(tile, dim - i * tile);
    }
    uint32_t matmuls() const { return blocks(m, tile_m) * blocks(k, tile_k) * blocks(n, tile_n); }
    // PSUM banks one tile's accumulators take per partition (fp32 accumulation).
    uint32_t psum_banks_per_tile(const PeConfig& pe) const;

    // Checks the shape against the PE (array size, SBUF/PSUM capacity); returns "" or the problem.
    std::string check(const PeConfig& pe) const;
    static const FieldList<GemmWorkload>& fields();
};

} // namespace nctlm
