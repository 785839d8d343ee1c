#include "models/host/host_config.h"

namespace nctlm {

const FieldList<HostConfig>& HostConfig::fields() {
    using C = HostConfig;
    static const FieldList<C> f = {
        bandwidth("memcpy_bandwidth", &C::memcpy_bandwidth, "10 GB/s",
                  "one host thread's copy rate when the data streams from DRAM (a copy's buffers larger than "
                  "llc_bytes, or a freshly allocated destination)")
            .assumed("x0.6..x1.4", "typical single-core copy rate of a 2021-22 Xeon server (trn1: Xeon 8375C, "
                                   "Ice Lake-SP); no published per-core figure for the part"),
        bandwidth("memcpy_llc_bandwidth", &C::memcpy_llc_bandwidth, "25 GB/s",
                  "one host thread's copy rate while the copy's source and destination fit in llc_bytes")
            .assumed("x0.6..x1.6", "typical single-core L3-resident copy rate of the same CPUs"),
        nctlm::bytes("llc_bytes", &C::llc_bytes, "6912 KiB", 64 * 1024, 1ull << 34,
                     "last-level cache the host program's copies can use: the instance's share of the socket's "
                     "L3 (trn1.2xlarge: 4 of the Xeon 8375C's 32 cores, 54 MB L3 -> 6.75 MB)")
            .assumed("x0.5..x2", "Xeon 8375C: 32 cores, 54 MB L3 (Intel Ice Lake-SP); trn1.2xlarge: 8 vCPU "
                                 "(Neuron trn1 arch guide) = 4 cores; the slice a VM gets is not published"),
        bandwidth("pcie_h2d_bandwidth", &C::pcie_h2d_bandwidth, "16.384 GB/s",
                  "host->device DMA rate of one descriptor (Neuron driver: a full 64 KiB descriptor takes "
                  "~4 us on v2 (trn1), ~2 us on v3 (trn2))")
            .documented("aws-neuron-driver v3/neuron_dhal_v3.c, ndma_get_wait_for_completion_time: 64K in ~4 usec "
                        "on V2, ~2 usec (32G/sec) on V3"),
        bandwidth("pcie_d2h_bandwidth", &C::pcie_d2h_bandwidth, "16.384 GB/s",
                  "device->host DMA rate of one descriptor (same driver figure; one DMA ring serves both directions)")
            .documented("aws-neuron-driver v3/neuron_dhal_v3.c, ndma_get_wait_for_completion_time"),
        duration("pcie_h2d_latency", &C::pcie_h2d_latency, "17 us",
                 "runtime work per host->device transfer on the host thread (tensor look-up, ioctl, ring set-up) "
                 "(calibrated: trn1 1024^2 to_device)")
            .calibrated("x0.5..x2", "trn1 1024^2 to_device (docs/validation/host.md)"),
        duration("pcie_d2h_latency", &C::pcie_d2h_latency, "231 us",
                 "runtime work per device->host transfer on the host thread (calibrated: trn1 1024^2 to_host)")
            .calibrated("-20%..+20%", "trn1 1024^2 to_host (docs/validation/host.md)"),
        nctlm::bytes("pcie_max_payload", &C::pcie_max_payload, "64 KiB", 256, 1ull << 30,
                     "one DMA descriptor, and the driver's bounce buffer for pageable copies (udma.h "
                     "MAX_DMA_DESC_SIZE 65536; ncdev_mem_buf_copy allocates one descriptor's worth)")
            .documented("aws-neuron-driver udma/udma.h MAX_DMA_DESC_SIZE, neuron_cdev.c ncdev_mem_buf_copy"),
        duration("pcie_descriptor_cost", &C::pcie_descriptor_cost, "1 us",
                 "from a descriptor's DMA end to the host seeing its completion and issuing the next (the driver "
                 "sleeps, then polls the completion marker every 1 us)")
            .documented("aws-neuron-driver neuron_dma.c ndma_memcpy_wait_for_completion: one_loop_sleep = 1 usec"),
        nctlm::bytes("page_bytes", &C::page_bytes, "4 KiB", 512, 1ull << 30,
                     "host page size: the unit the driver pins for zero-copy DMA (x86-64 Linux base page)")
            .documented("x86-64 Linux base page; aws-neuron-driver neuron_dma.c pins PAGE_SIZE pages"),
        duration("page_pin_cost", &C::page_pin_cost, "0.1 us",
                 "pinning one page of a page-locked host buffer for zero-copy DMA (pin_user_pages_fast)")
            .assumed("x0.3..x5", "a page-table walk and reference count per page; no published figure"),
        count("pin_batch_pages", &C::pin_batch_pages, "64", 1, 1u << 20,
              "pages pinned per zero-copy DMA batch; the next batch is pinned while this one's DMA runs")
            .documented("aws-neuron-driver neuron_dma.c NDMA_ZC_PAGES_PER_XFER 64"),
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
