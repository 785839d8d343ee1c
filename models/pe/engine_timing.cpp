#include "models/pe/engine_timing.h"

#include <algorithm>

namespace nctlm {

uint32_t dtype_bytes(Dtype t) {
    switch (t) {
    case Dtype::Bf16:
    case Dtype::Fp16:
        return 2;
    case Dtype::Fp8:
        return 1;
    case Dtype::Fp32:
        return 4;
    }
    return 0;
}

std::string dtype_name(Dtype t) {
    switch (t) {
    case Dtype::Bf16:
        return "bf16";
    case Dtype::Fp16:
        return "fp16";
    case Dtype::Fp8:
        return "fp8";
    case Dtype::Fp32:
        return "fp32";
    }
    return "?";
}

Dtype parse_dtype(const std::string& text) {
    for (Dtype t : {Dtype::Bf16, Dtype::Fp16, Dtype::Fp8, Dtype::Fp32})
        if (dtype_name(t) == text)
            return t;
    throw UnitError("'" + text + "' is not a dtype (bf16|fp16|fp8|fp32)");
}

double matmul_cost_cycles(uint32_t n_stationary, uint32_t n_moving, Dtype dtype, const TensorTiming& t) {
    double cost = double(std::max(std::min(t.stationary_floor, n_stationary), n_moving));
    if (dtype == Dtype::Fp32)
        return cost * t.fp32_passes;
    if (dtype == Dtype::Fp8)
        return cost / std::max(1u, t.fp8_speedup);
    return cost;
}

double matmul_cycles(uint32_t n_stationary, uint32_t n_moving, Dtype dtype, const TensorTiming& t) {
    return std::max(double(t.min_issue_cycles), matmul_cost_cycles(n_stationary, n_moving, dtype, t)) +
           t.overhead_cycles;
}

double vector_speedup(const VectorTiming& v, uint32_t inputs, const VectorOperands& o) {
    bool half_width = o.dtype == Dtype::Bf16 || o.dtype == Dtype::Fp16;
    if (!half_width || v.bf16_speedup <= 1)
        return 1;
    if (inputs <= 1 && !o.psum)
        return v.bf16_speedup;
    if (inputs <= 1 || !o.psum)  // one input with a PSUM operand, or two inputs in SBUF
        return std::max(1.0, v.bf16_speedup / 2.0);
    return 1;
}

double vector_op_cycles(uint32_t n, const VectorTiming& v, uint32_t inputs, const VectorOperands& o) {
    double work = double(n) * std::max(1u, inputs) / vector_speedup(v, inputs, o);
    return std::max(double(v.min_cycles), work) + v.access_overhead_cycles;
}

double scalar_op_cycles(uint32_t n, uint32_t partitions, const ScalarTiming& s, uint32_t inputs) {
    double passes = double((std::max(1u, partitions) + s.lanes - 1) / std::max(1u, s.lanes));
    double work = double(n) * std::max(1u, inputs);
    return passes * std::max(double(s.min_cycles), work) + s.access_overhead_cycles;
}

} // namespace nctlm
