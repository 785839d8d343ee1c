// Blocking of one core's share of a whole GEMM (C = A . B, A: m x k, B: k x n) for the blocked GEMM
// kernel (testbenches/gemm/gemm_kernel.h: blocks of bm rows x bn columns, the contraction in
// blocks of bk, partial sums accumulated in SBUF). A closed-form estimate per candidate, used
// only to rank candidates: the figure reported comes from simulating the chosen kernel.
// docs/models/pe.md ("Whole-GEMM blocking") gives the candidate set and the rule. Pure C++.
#pragma once

#include "models/dma/dma_config.h"
#include "models/pe/engine_timing.h"
#include "models/pe/gemm_workload.h"
#include "models/pe/pe_config.h"

#include <cstdint>
#include <string>
#include <vector>

namespace nctlm::analytic {

struct GemmShape {
    uint64_t m = 0, k = 0, n = 0;  // one core's rows, the contraction, the columns
    Dtype dtype = Dtype::Bf16;
    uint32_t tile_m = 128, tile_k = 128, tile_n = 512;  // one matmul: stationary tile_k x tile_m, moving tile_k x tile_n
};

struct GemmBlocking {
    uint32_t bm = 0, bn = 0, bk = 0;               // multiples of tile_m, tile_n, tile_k
    uint32_t a_bufs = 0, b_bufs = 0, psum_bufs = 0;  // SBUF copies of the A and B blocks; PSUM tiles
};

// What one core moves from and to HBM per second, and pays per DMA instruction.
struct GemmRates {
    double dma_bytes_per_ns = 0;  // min(the engines' theoretical rate, the core's share of its stack)
    double dma_start_ns = 0;      // dma.start_latency
    uint64_t full_run_bytes = 0;  // hbm.interleave: a contiguous run shorter than this streams at run / this of the rate
    // The DMA engines (docs/models/dma.md, "Transfer shape"): `engines` each move a packet of at
    // most `packet_bytes` of one HBM run for `packet_overhead_ns` plus its bytes at
    // `engine_ns_per_byte`. engines = 0: no engine limit.
    uint32_t engines = 0;
    uint64_t packet_bytes = 1;
    double packet_overhead_ns = 0, engine_ns_per_byte = 0;

    // Bytes per ns a block whose HBM rows are runs of `run_bytes` moves: each run in one partition,
    // the partitions spread evenly over the engines, each run cut into packets; the stack's side
    // derated for runs shorter than the interleave (fewer banks busy).
    double run_rate(double run_bytes) const;
    // The engine limit from the DMA block's parameters.
    void use_engines(const DmaConfig& dma);
};
struct GemmBlockingCost {
    double tensor_ns = 0, vector_ns = 0, scalar_ns = 0, dma_ns = 0;  // busy time per resource
    double startup_ns = 0, drain_ns = 0;  // the first blocks' loads; the last block's stores
    double total_ns = 0;                  // the estimate: steady state + startup + drain
    std::string bound;                    // the resource with the largest busy time
    double hbm_bytes = 0;
    uint64_t sbuf_bytes = 0, psum_bytes = 0;  // per partition
};

// Per-partition SBUF and PSUM bytes of the kernel's buffers for this blocking (make_layout's rule).
uint64_t gemm_sbuf_bytes(const GemmShape& s, const GemmBlocking& b);
uint64_t gemm_psum_bytes(const GemmShape& s, const GemmBlocking& b, const PeConfig& pe);
// "" or why the blocking does not fit the PE.
std::string gemm_blocking_fits(const GemmShape& s, const GemmBlocking& b, const PeConfig& pe);

GemmBlockingCost gemm_blocking_cost(const GemmShape& s, const GemmBlocking& b, const PeConfig& pe,
                                    const GemmRates& rates);

// Every candidate that fits: bm, bn, bk each a multiple 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48 or 64
// of the matmul tile up to the dimension rounded up to a tile; A and B blocks single- or
// double-buffered; 2, 4 or 8 PSUM tiles.
std::vector<GemmBlocking> gemm_blocking_candidates(const GemmShape& s, const PeConfig& pe);

struct RankedBlocking {
    GemmBlocking blocking;
    GemmBlockingCost cost;
};
// The candidates ranked by estimate (ties: less SBUF, more PSUM tiles, then larger bk, bm, bn);
// empty when none fits. `keep`: how many to return.
std::vector<RankedBlocking> gemm_blocking_search(const GemmShape& s, const PeConfig& pe, const GemmRates& rates,
                                                 size_t keep = 1);

// A whole M x K x N GEMM over cores, by rows of the output: each core but the last owns
// rows_per_core rows (a multiple of the matmul tile), the last the rest; every core runs the
// blocked kernel with the blocking the search ranks first for its share.
struct GemmPlan {
    uint32_t cores = 0;
    uint64_t m = 0, k = 0, n = 0, rows_per_core = 0;
    GemmShape core;          // one core's share: m = rows_per_core
    RankedBlocking chosen;   // the blocking and its estimate
    double flops() const { return 2.0 * double(m) * double(k) * double(n); }
};
// The core count asked for: cores_text "1" | "all" | N (<= platform_cores). "" or the problem.
std::string plan_gemm_cores(const std::string& cores_text, uint32_t platform_cores, uint32_t& cores);
// The rows over `cores` cores and each core's blocking: w gives m, k, n, dtype and the matmul tile
// (tile_m, tile_k, tile_n); `rates` one core's DMA rates. "" and `out` filled, or the problem
// naming the workload key.
std::string plan_gemm(const GemmWorkload& w, uint32_t cores, const PeConfig& pe, const GemmRates& rates,
                      GemmPlan& out);

} // namespace nctlm::analytic
