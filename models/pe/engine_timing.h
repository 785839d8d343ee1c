// Cost rules of the NeuronCore compute engines, as pure functions (no SystemC), shared by the
// PE model, the analytic pipeline model and other testbenches. Sources: docs/models/pe.md.
#pragma once

#include "models/common/units.h"

#include <cstdint>
#include <string>

namespace nctlm {

// Element types the tensor engine accepts. PSUM accumulates in fp32 whatever the input type.
enum class Dtype { Bf16, Fp16, Fp8, Fp32 };
uint32_t dtype_bytes(Dtype t);
std::string dtype_name(Dtype t);
Dtype parse_dtype(const std::string& text); // "bf16" | "fp16" | "fp8" | "fp32"; throws UnitError

// Tensor-engine matmul rule (NKI performance guide):
//   cost = max(min(stationary_floor, N_stationary), N_moving) cycles, x fp32_passes for fp32
//   (FP32 runs at 1/4 of the BF16 rate), / fp8_speedup for fp8, and consecutive matmuls issue
//   >= min_issue_cycles apart. FP8 on NeuronCore-v3 doubles the contraction rows of one
//   instruction (128 -> 256) in the same time (NKI Trainium2 arch guide, "Double FP8 Matmul
//   Performance"); the rule charges a 128-row block half the cycles, the same rate. NeuronCore-v2
//   runs cFP8 at the BF16 rate (fp8_speedup 1).
struct TensorTiming {
    uint32_t stationary_floor = 64; // the min(64, N_stationary) term
    uint32_t min_issue_cycles = 64; // minimum gap between two matmul issues
    uint32_t fp32_passes = 4;       // FP32 = 1/4 BF16 rate
    uint32_t overhead_cycles = 0;   // static per-instruction overhead not hidden by pipelining
    uint32_t fp8_speedup = 1;       // FP8 = this x the BF16 rate
};
// Cycles the array is busy for one matmul instruction, without the issue gap or overhead.
double matmul_cost_cycles(uint32_t n_stationary, uint32_t n_moving, Dtype dtype, const TensorTiming& t = {});
// Cycles from one matmul issue to the next one's: max(issue gap, cost) + static overhead.
double matmul_cycles(uint32_t n_stationary, uint32_t n_moving, Dtype dtype, const TensorTiming& t = {});

// Vector-engine rule (NKI performance guide): a one-input op over N elements per partition takes
// max(min_cycles, N) cycles (two-input ops ~2N), plus a fixed SBUF/PSUM access overhead.
// NeuronCore-v3's performance mode (NKI Trainium2 arch guide, "Vector Engine Performance Mode")
// divides the N term for BF16/FP16 operands: by bf16_speedup (4) for a one-input op whose input
// and output are in SBUF, by half of it (2) for a one-input op with an operand in PSUM or a
// two-input op over SBUF. An op reading PSUM reads fp32 accumulators, so it qualifies only when
// its operand dtype says bf16/fp16 (a copy out of PSUM in transpose mode); the callers pass
// `reads_psum` and the dtype of the operands.
struct VectorTiming {
    uint32_t min_cycles = 64;             // max(64, N)
    uint32_t access_overhead_cycles = 60; // static SBUF/PSUM access bubble
    uint32_t bf16_speedup = 1;            // NeuronCore-v3: 4; NeuronCore-v2: 1 (no performance mode)
};
// The operands of a vector op, for the performance mode: element type and whether one is in PSUM.
struct VectorOperands {
    Dtype dtype = Dtype::Fp32;
    bool psum = true;
};
// How much faster the N term runs for these operands (1 when the performance mode does not apply).
double vector_speedup(const VectorTiming& v, uint32_t inputs, const VectorOperands& o);
double vector_op_cycles(uint32_t n, const VectorTiming& v = {}, uint32_t inputs = 1, const VectorOperands& o = {});

// Scalar-engine (activation) rule: one lane per partition (NKI ISA: 128 reduce registers, one per
// lane), one element per lane per cycle, so an op over N elements on P partitions takes
// ceil(P / lanes) x max(min_cycles, N x inputs) cycles plus the static access overhead, as VectorE.
struct ScalarTiming {
    uint32_t lanes = 128;
    uint32_t min_cycles = 64;
    uint32_t access_overhead_cycles = 60;
};
double scalar_op_cycles(uint32_t n, uint32_t partitions, const ScalarTiming& s = {}, uint32_t inputs = 1);

} // namespace nctlm
