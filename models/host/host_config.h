#pragma once

#include "models/common/config.h"

namespace nctlm {

// Host, PCIe link, runtime and the analytic device-kernel cost; mirrors `host.*` in the platform
// YAML. Every key has a default (the trn1 calibration, docs/calibration.md (host)), so a platform
// that does not model the host may leave the section out.
struct HostConfig {
    // host/Host: CPU memcpy through the runtime's pinned bounce buffer (pageable tensors only).
    Bandwidth memcpy_bandwidth;
    // host/PcieLink: per direction, per transfer.
    Bandwidth pcie_h2d_bandwidth;
    Bandwidth pcie_d2h_bandwidth;
    Duration pcie_h2d_latency;
    Duration pcie_d2h_latency;
    uint64_t pcie_max_payload = 0; // one DMA descriptor; also the staging chunk
    // host/Runtime
    Duration submission_cost; // one graph submitted at mark_step
    // host/KernelCostModel (analytic stand-in for the GEMM model)
    double kernel_bf16_tflops = 0; // per NeuronCore
    double kernel_fp32_ratio = 0;  // fp32 matmul rate / bf16 rate
    uint32_t kernel_cores = 0;     // cores one graph's matmul runs on
    Duration kernel_launch;        // device-side start of one kernel

    static const FieldList<HostConfig>& fields();
};

} // namespace nctlm
