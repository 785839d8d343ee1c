// A whole M x K x N GEMM split over NeuronCores (pure C++). Partitioning: by rows of the output —
// core c owns rows [c x M/cores, (c+1) x M/cores) of C; within a core the rows are cut into row
// blocks of `m_t` rows (a multiple of tile_m) and N into column blocks of tile_n columns. Each
// (row block, column block) pair is one tile of the GEMM pipeline (testbenches/gemm/gemm_kernel.h) with both
// operands streamed: A's row block (m_t x K) and B's column block (K x tile_n), the full K
// accumulated in PSUM over K blocks of tile_k (K-blocking inside the tile). Column blocks vary
// fastest. m_t is the largest multiple of tile_m dividing the core's rows whose tile fits SBUF and
// PSUM with `buffers` buffers (a larger m_t reuses each B block over more rows).
#pragma once

#include "models/pe/gemm_workload.h"

#include <cstdint>
#include <string>

namespace nctlm {

struct GemmPartition {
    uint32_t cores = 0;
    uint32_t rows_per_core = 0;
    uint32_t row_blocks = 0, col_blocks = 0;  // per core
    GemmWorkload tile;                        // one tile (m_t x K x tile_n), tiles = per core
    double flops() const { return 2.0 * double(rows_per_core) * cores * tile.k * double(col_blocks) * tile.n; }
};

// cores_text: "1" | "all" | N (<= platform_cores). `shape` gives M (m), K (k), N (n), dtype,
// tile_m/k/n and buffers. Returns "" and fills `out`, or what is wrong and what would fit.
std::string plan_gemm(const GemmWorkload& shape, const std::string& cores_text, uint32_t platform_cores,
                      const PeConfig& pe, GemmPartition& out);

} // namespace nctlm
