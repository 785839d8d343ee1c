#include "models/host/kernel_cost.h"

namespace nctlm {

uint32_t element_bytes(DType t) { return t == DType::Fp32 ? 4 : 2; }

AnalyticKernelCost::AnalyticKernelCost(const HostConfig& cfg) : cfg_(cfg) {}

double AnalyticKernelCost::flops_per_s(DType t) const {
    double ratio = t == DType::Fp32 ? cfg_.kernel_fp32_ratio : 1.0;
    return cfg_.kernel_bf16_tflops * 1e12 * ratio * cfg_.kernel_cores;
}

Duration AnalyticKernelCost::matmul(const MatmulShape& s) const {
    return cfg_.kernel_launch + Duration(s.flops() / flops_per_s(s.dtype) * 1e9);
}

} // namespace nctlm
