#include "models/host/host_config.h"

namespace nctlm {

const FieldList<HostConfig>& HostConfig::fields() {
    using C = HostConfig;
    static const FieldList<C> f = {
        bandwidth("memcpy_bandwidth", &C::memcpy_bandwidth, "10.5 GB/s",
                  "host CPU copy of a pageable tensor through the pinned bounce buffer (calibrated: "
                  "trn1 1024^2 to_device + overlap; typical single-thread memcpy)")
            .calibrated("-25%..+30%", "trn1 1024^2 to_device + overlap"),
        bandwidth("pcie_h2d_bandwidth", &C::pcie_h2d_bandwidth, "6.8 GB/s",
                  "effective host->device DMA rate per transfer (calibrated: trn1 1024^2 to_device)")
            .calibrated("-25%..+30%", "trn1 1024^2 to_device; rests on the assumed h2d latency"),
        bandwidth("pcie_d2h_bandwidth", &C::pcie_d2h_bandwidth, "5.8 GB/s",
                  "effective device->host DMA rate (calibrated: slope of trn1 to_host 4 MiB -> 16 MiB)")
            .calibrated("-5%..+5%", "slope of trn1 to_host 4 MiB -> 16 MiB"),
        duration("pcie_h2d_latency", &C::pcie_h2d_latency, "240 us",
                 "fixed runtime cost per host->device transfer, host thread busy (assumed = d2h latency)")
            .assumed("x0.5..x1.5", "= d2h latency"),
        duration("pcie_d2h_latency", &C::pcie_d2h_latency, "240 us",
                 "fixed runtime cost per device->host transfer (calibrated: intercept of trn1 to_host)")
            .calibrated("-10%..+10%", "intercept of trn1 to_host"),
        nctlm::bytes("pcie_max_payload", &C::pcie_max_payload, "64 KiB", 256, 1ull << 30,
                     "one DMA descriptor and one staging chunk (Neuron DMA guide: <= 64 KiB per descriptor)")
            .documented("Neuron DMA guide"),
        duration("submission_cost", &C::submission_cost, "605 us",
                 "fixed host cost of submitting one graph at mark_step (calibrated: trn1 kernel rows minus the chip kernel)")
            .calibrated("-10%..+10%", "trn1 kernel rows minus the chip-simulated kernel (0.584..0.627 ms)"),
        real("kernel_bf16_tflops", &C::kernel_bf16_tflops, "92", 0.001, 1e6,
             "analytic kernel model: BF16 dense peak per core in TFLOPS (Neuron arch guide: ~92 on trn1)")
            .documented("Neuron arch guide"),
        real("kernel_fp32_ratio", &C::kernel_fp32_ratio, "0.25", 0.001, 1,
             "analytic kernel model: fp32 matmul rate / BF16 rate (Neuron arch guide: FP32 ~1/4 of BF16)")
            .documented("Neuron arch guide"),
        count("kernel_cores", &C::kernel_cores, "2", 1, 256,
              "NeuronCores one matmul kernel runs on, split by output rows (trn1.2xlarge: 1 chip, 2 cores)")
            .assumed("x0.5..x1", "a matmul spans the chip's cores"),
        duration("kernel_launch", &C::kernel_launch, "5 us",
                 "analytic kernel model: device-side start of a kernel (assumed: a few ~1.3 us DMA starts)")
            .assumed("x0.2..x4", "a few ~1.3 us DMA starts"),
    };
    return f;
}

} // namespace nctlm
