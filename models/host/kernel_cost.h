// Device time of one kernel, behind an interface so the runtime does not care where it comes
// from: AnalyticKernelCost (peak rate x cores, from YAML) today, the GEMM tensor-engine model
// (models/pe) once it lands. Pure C++.
#pragma once

#include "models/common/units.h"
#include "models/host/host_config.h"

#include <cstdint>
#include <string>

namespace nctlm {

enum class DType { Fp32, Bf16 };

// C[m x n] = A[m x k] . B[k x n]
struct MatmulShape {
    uint64_t m = 0, n = 0, k = 0;
    DType dtype = DType::Fp32;
    double flops() const { return 2.0 * double(m) * double(n) * double(k); }
};

uint32_t element_bytes(DType t);

class KernelCostModel {
public:
    virtual ~KernelCostModel() = default;
    // Device execution of one matmul kernel, from its start on the device to its last write.
    virtual Duration matmul(const MatmulShape& shape) const = 0;
    virtual std::string name() const = 0;
};

// launch + 2mnk / (bf16 peak x dtype ratio x cores): a kernel at its peak rate, no memory bound.
class AnalyticKernelCost : public KernelCostModel {
public:
    explicit AnalyticKernelCost(const HostConfig& cfg);
    Duration matmul(const MatmulShape& shape) const override;
    std::string name() const override { return "analytic"; }
    double flops_per_s(DType t) const;

private:
    HostConfig cfg_;
};

} // namespace nctlm
