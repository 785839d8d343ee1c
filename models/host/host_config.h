#pragma once

#include "models/common/config.h"

namespace nctlm {

// Host, PCIe link, runtime and the analytic device-kernel cost; mirrors `host.*` in the platform
// YAML. Every key has a default (the trn1 calibration, docs/calibration.md, docs/validation/host.md), so a platform
// that does not model the host may leave the section out.
struct HostConfig {
    // host/Host: one CPU thread's copy rate by where the data is: streaming from DRAM, or while the
    // copy's buffers fit in the last-level cache share the host program can use.
    Bandwidth memcpy_bandwidth;     // from/to DRAM
    Bandwidth memcpy_llc_bandwidth; // within the LLC
    uint64_t llc_bytes = 0;
    // host/PcieLink: per direction, per transfer; the driver's copy loop (docs/models/host.md).
    Bandwidth pcie_h2d_bandwidth;   // one descriptor's DMA across PCIe
    Bandwidth pcie_d2h_bandwidth;
    Duration pcie_h2d_latency;      // runtime work per transfer on the host thread
    Duration pcie_d2h_latency;
    uint64_t pcie_max_payload = 0;  // one DMA descriptor; also the driver's bounce buffer
    Duration pcie_descriptor_cost;  // DMA end -> the host sees the completion and goes on
    // Zero-copy of page-locked host buffers: the driver pins pages in batches, pinning the next
    // batch while the previous one's DMA runs.
    uint64_t page_bytes = 0;
    Duration page_pin_cost;
    uint32_t pin_batch_pages = 0;
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
