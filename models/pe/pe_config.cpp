#include "models/pe/pe_config.h"

namespace nctlm {

const FieldList<PeConfig>& PeConfig::fields() {
    using C = PeConfig;
    static const FieldList<C> f = {
        frequency("tensor_clock", &C::tensor_clock, "2.8 GHz",
                  "tensor engine clock (Neuron arch guide, trn1)")
            .documented("Neuron arch guide"),
        count("tensor_rows", &C::tensor_rows, "128", 1, 1024,
              "systolic array rows = contraction per matmul (128x128)")
            .documented("Neuron arch guide"),
        count("tensor_cols", &C::tensor_cols, "128", 1, 1024,
              "systolic array columns = most stationary columns")
            .documented("NKI guide"),
        count("moving_max", &C::moving_max, "512", 1, 65536,
              "most moving columns per matmul (NKI: 128 x 512)")
            .documented("NKI guide"),
        count("matmul_stationary_floor", &C::matmul_stationary_floor, "64", 0, 65536,
              "cost max(min(F, N_stationary), N_moving) cycles (NKI performance guide: F = 64)")
            .documented("NKI performance guide"),
        count("matmul_issue_cycles", &C::matmul_issue_cycles, "64", 0, 65536,
              "minimum cycles between two matmul issues (NKI performance guide: 64)")
            .documented("NKI performance guide"),
        count("fp32_passes", &C::fp32_passes, "4", 1, 16,
              "fp32 runs at 1/passes of the bf16 rate (arch guide: 1/4)")
            .documented("Neuron arch guide"),
        count("matmul_overhead_cycles", &C::matmul_overhead_cycles, "0", 0, 100000,
              "static per-matmul overhead not hidden by pipelining (NKI: ~100 cycles for dependent "
              "instructions, partly hidden; calibrated)")
            .calibrated("x0.7..x1.4", "GEMM stage of the small-tile study (~785 ns)"),
        count("operand_buffers", &C::operand_buffers, "2", 1, 64,
              "fetched-operand staging buffers in front of the array (double-buffered weight load)")
            .assumed("2..4", "double-buffered staging"),
        frequency("vector_clock", &C::vector_clock, "1.12 GHz",
                  "vector engine clock (Neuron arch guide, trn1)")
            .documented("Neuron arch guide"),
        count("vector_min_cycles", &C::vector_min_cycles, "64", 0, 65536,
              "one-input vector op: max(64, N) cycles (NKI performance guide)")
            .documented("NKI performance guide"),
        count("vector_access_cycles", &C::vector_access_cycles, "60", 0, 65536,
              "static SBUF/PSUM access overhead per vector instruction (NKI performance guide: ~60)")
            .documented("NKI performance guide"),
        frequency("scalar_clock", &C::scalar_clock, "1.12 GHz",
                  "scalar (activation) engine clock (assumed = vector_clock: ScalarE and VectorE share the "
                  "engine clock domain in the Neuron arch guide)")
            .assumed("x0.5..x2", "= vector clock; no separate ScalarE figure"),
        count("scalar_lanes", &C::scalar_lanes, "128", 1, 1024,
              "scalar engine lanes, one per partition (NKI ISA activation: 128 reduce registers, one per lane)")
            .documented("NKI ISA activation"),
        count("scalar_min_cycles", &C::scalar_min_cycles, "64", 0, 65536,
              "activation over N elements: max(64, N) cycles per pass (assumed the VectorE rule, NKI performance guide)")
            .assumed("x0.5..x2", "the VectorE rule"),
        count("scalar_access_cycles", &C::scalar_access_cycles, "60", 0, 65536,
              "static SBUF/PSUM access overhead per activation (assumed the VectorE ~60, NKI performance guide)")
            .assumed("x0.5..x2", "the VectorE overhead"),
        count("sbuf_partitions", &C::sbuf_partitions, "128", 1, 1024, "SBUF partitions (arch guide: 128)")
            .documented("Neuron arch guide"),
        nctlm::bytes("sbuf_partition_bytes", &C::sbuf_partition_bytes, "192 KiB", 1, 1ull << 30,
                     "SBUF bytes per partition (arch guide: 24 MiB = 128 x 192 KiB)")
            .documented("Neuron arch guide"),
        bandwidth("sbuf_partition_bandwidth", &C::sbuf_partition_bandwidth, "4 GB/s",
                  "SBUF read rate per partition towards the tensor engine (calibrated: see calibration.md)")
            .calibrated("-10%..+10%", "Fetch stage of the small-tile study (~785 ns)"),
        duration("sbuf_latency", &C::sbuf_latency, "17 ns", "SBUF access latency (calibrated)")
            .calibrated("x0.5..x2", "with sbuf_partition_bandwidth"),
        nctlm::bytes("psum_partition_bytes", &C::psum_partition_bytes, "16 KiB", 1, 1ull << 30,
                     "PSUM bytes per partition (arch guide: 2 MiB = 128 x 16 KiB)")
            .documented("Neuron arch guide"),
        count("psum_banks", &C::psum_banks, "8", 1, 64, "PSUM banks per partition (arch guide: 8 x 2 KiB)")
            .documented("Neuron arch guide"),
        bandwidth("psum_partition_bandwidth", &C::psum_partition_bandwidth, "11.2 GB/s",
                  "PSUM access rate per partition (assumed: one fp32 per row per tensor-engine cycle)")
            .assumed("x0.5..x2", "one fp32 per row per tensor cycle"),
        duration("psum_latency", &C::psum_latency, "17 ns", "PSUM access latency (assumed equal to SBUF)")
            .assumed("x0.5..x2", "= SBUF latency"),
        bandwidth("dma_bandwidth", &C::dma_bandwidth, "272 GB/s",
                  "achievable rate of PE-issued 2-D DMA transfers (Neuron DMA guide: 17 B/ns x 16 engines)")
            .documented("Neuron DMA guide: 17 B/ns x 16"),
        nctlm::bytes("dma_descriptor_bytes", &C::dma_descriptor_bytes, "32 KiB", 64, 64 * 1024,
                     "a PE DMA instruction is cut into descriptors of this size (DMA guide: <= 64 KiB each)")
            .documented("Neuron DMA guide: <= 64 KiB"),
        duration("pipeline_fill", &C::pipeline_fill, "60 ns",
                 "kernel launch -> first instruction issued (calibrated)")
            .calibrated("x0.5..x2", "pipeline fill of the small-tile study"),
        duration("pipeline_tail", &C::pipeline_tail, "30 ns",
                 "last completion -> kernel done visible (calibrated)")
            .calibrated("x0.5..x2", "pipeline tail of the small-tile study"),
    };
    return f;
}

} // namespace nctlm
