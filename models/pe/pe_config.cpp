#include "models/pe/pe_config.h"

namespace nctlm {

const FieldList<PeConfig>& PeConfig::fields() {
    using C = PeConfig;
    static const FieldList<C> f = {
        frequency("tensor_clock", &C::tensor_clock, "2.8 GHz",
                  "tensor engine clock (trn1 2.8 GHz, trn2 2.4 GHz)")
            .documented("NKI arch guides, engine frequency tables (Trainium/Inferentia2 guide: NeuronCore-v2 "
                        "compute engines; Trainium2 guide: Compute Engine Specifications)"),
        count("tensor_rows", &C::tensor_rows, "128", 1, 1024,
              "systolic array rows = contraction per matmul (128x128)")
            .documented("NKI Trainium/Inferentia2 arch guide, Tensor Engine: 128 x 128 systolic array"),
        count("tensor_cols", &C::tensor_cols, "128", 1, 1024,
              "systolic array columns = most stationary columns")
            .documented("NKI Trainium/Inferentia2 arch guide, Tensor Engine: stationary <= 128 x 128"),
        count("moving_max", &C::moving_max, "512", 1, 65536,
              "most moving columns per matmul (NKI: 128 x 512)")
            .documented("NKI Trainium/Inferentia2 arch guide, Tensor Engine: moving <= 128 x 512 (one PSUM bank)"),
        count("matmul_stationary_floor", &C::matmul_stationary_floor, "64", 0, 65536,
              "cost max(min(F, N_stationary), N_moving) cycles (NKI performance guide: F = 64)")
            .documented("NKI performance guide, Opt #7 (fast LoadStationary, LS_II ~ N/4, MM_II ~ max(N, 64))"),
        count("matmul_issue_cycles", &C::matmul_issue_cycles, "64", 0, 65536,
              "minimum cycles between two matmul issues (NKI: MM_INIT_LATENCY = 64 TensorE cycles)")
            .documented("NKI Trainium/Inferentia2 arch guide, Tensor Engine cost model: MM_INIT_LATENCY 64 cycles "
                        "on NeuronCore-v2"),
        count("fp32_passes", &C::fp32_passes, "4", 1, 16,
              "fp32 runs at 1/passes of the bf16 rate (arch guide: 1/4)")
            .documented("NKI Trainium/Inferentia2 arch guide, Tensor Engine: 92 BF16 vs 23 FP32 TFLOPS, 'roughly 4x' "
                        "cost; NKI Trainium2 guide: 79 vs 20 dense TFLOPS"),
        count("matmul_overhead_cycles", &C::matmul_overhead_cycles, "0", 0, 100000,
              "static per-matmul overhead not hidden by pipelining (NKI: ~100 cycles for dependent "
              "instructions, partly hidden; calibrated)")
            .calibrated("x0.7..x1.4", "GEMM stage of the small-tile study (~785 ns)"),
        count("operand_buffers", &C::operand_buffers, "2", 1, 64,
              "fetched-operand staging buffers in front of the array (double-buffered weight load)")
            .assumed("2..4", "double-buffered staging"),
        count("fp8_speedup", &C::fp8_speedup, "1", 1, 8,
              "FP8 matmul rate / BF16 rate (trn2: 2, double-row FP8; trn1: cFP8 at the BF16 rate)")
            .documented("NKI Trainium2 arch guide, Double FP8 Matmul Performance (158 FP8 vs 79 BF16 TFLOPS); "
                        "NKI Trainium/Inferentia2 guide, Tensor Engine: BF16/FP16/TF32/cFP8 at 92 TFLOPS"),
        frequency("vector_clock", &C::vector_clock, "1.12 GHz",
                  "vector engine clock (trn1 1.12 GHz, trn2 0.96 GHz)")
            .documented("NKI arch guides, engine frequency tables (Trainium/Inferentia2; Trainium2)"),
        count("vector_min_cycles", &C::vector_min_cycles, "64", 0, 65536,
              "one-input vector op: max(64, N) cycles (NKI performance guide)")
            .documented("NKI Trainium/Inferentia2 arch guide, Vector Engine cost model: ~N cycles one input, ~2N two"),
        count("vector_access_cycles", &C::vector_access_cycles, "60", 0, 65536,
              "static SBUF/PSUM access overhead per vector instruction (NKI performance guide: ~60)")
            .documented("NKI performance guide (static SBUF/PSUM access overhead, ~60 cycles)"),
        count("vector_bf16_speedup", &C::vector_bf16_speedup, "1", 1, 16,
              "vector performance mode for BF16/FP16 operands: x this for one-input SBUF ops, x half of it "
              "with a PSUM operand or two inputs (trn2: 4; trn1: none)")
            .documented("NKI Trainium2 arch guide, Vector Engine Performance Mode (4x / 2x vs NeuronCore-v2)"),
        frequency("scalar_clock", &C::scalar_clock, "1.4 GHz",
                  "scalar (activation) engine clock (trn1 1.4 GHz, trn2 1.2 GHz)")
            .documented("NKI arch guides, engine frequency tables (Trainium/Inferentia2: Scalar 1.4 GHz; "
                        "Trainium2: Scalar 1.2 GHz)"),
        count("scalar_lanes", &C::scalar_lanes, "128", 1, 1024,
              "scalar engine lanes, one per partition (NKI: 128 parallel lanes, 128 input/output elements per cycle)")
            .documented("NKI Trainium/Inferentia2 arch guide, Scalar Engine (128 parallel lanes) and frequency table"),
        count("scalar_min_cycles", &C::scalar_min_cycles, "64", 0, 65536,
              "activation over N elements: max(64, N) cycles per pass (assumed the VectorE rule, NKI performance guide)")
            .assumed("x0.5..x2", "the VectorE rule"),
        count("scalar_access_cycles", &C::scalar_access_cycles, "60", 0, 65536,
              "static SBUF/PSUM access overhead per activation (assumed the VectorE ~60, NKI performance guide)")
            .assumed("x0.5..x2", "the VectorE overhead"),
        count("sbuf_partitions", &C::sbuf_partitions, "128", 1, 1024, "SBUF partitions (arch guide: 128)")
            .documented("NKI Trainium/Inferentia2 arch guide, NeuronCore-v2 memories: 128 partitions"),
        nctlm::bytes("sbuf_partition_bytes", &C::sbuf_partition_bytes, "192 KiB", 1, 1ull << 30,
                     "SBUF bytes per partition (trn1 24 MiB = 128 x 192 KiB; trn2 28 MiB = 128 x 224 KiB)")
            .documented("NKI arch guides (Trainium/Inferentia2: 24MiB SBUF, 192KiB per partition; Trainium2: "
                        "28MiB, 224KiB per partition)"),
        bandwidth("sbuf_partition_bandwidth", &C::sbuf_partition_bandwidth, "4 GB/s",
                  "SBUF read rate per partition towards the tensor engine (calibrated: see calibration.md)")
            .calibrated("-10%..+10%", "Fetch stage of the small-tile study (~785 ns)"),
        duration("sbuf_latency", &C::sbuf_latency, "17 ns", "SBUF access latency (calibrated)")
            .calibrated("x0.5..x2", "with sbuf_partition_bandwidth"),
        nctlm::bytes("psum_partition_bytes", &C::psum_partition_bytes, "16 KiB", 1, 1ull << 30,
                     "PSUM bytes per partition (2 MiB = 128 x 16 KiB on trn1 and trn2)")
            .documented("NKI Trainium/Inferentia2 arch guide (2MiB PSUM, 16KiB per partition); NKI Trainium2 "
                        "guide ('PSUM capacity remains the same at 2MiB')"),
        count("psum_banks", &C::psum_banks, "8", 1, 64, "PSUM banks per partition (arch guide: 8 x 2 KiB)")
            .documented("NKI Trainium/Inferentia2 arch guide, Tensor Engine layout: one PSUM bank holds 512 FP32 "
                        "per partition (2 KiB of 16 KiB: 8 banks)"),
        bandwidth("psum_partition_bandwidth", &C::psum_partition_bandwidth, "11.2 GB/s",
                  "PSUM access rate per partition (assumed: one fp32 per row per tensor-engine cycle)")
            .assumed("x0.5..x2", "one fp32 per row per tensor cycle"),
        duration("psum_latency", &C::psum_latency, "17 ns", "PSUM access latency (assumed equal to SBUF)")
            .assumed("x0.5..x2", "= SBUF latency"),
        nctlm::bytes("dma_descriptor_bytes", &C::dma_descriptor_bytes, "32 KiB", 64, 64 * 1024,
                     "a PE DMA instruction is cut into descriptors of this size (32 KiB per transfer per engine)")
            .documented("NKI performance guide, Opt #9: 16 DMA transfers of 32KiB each, 'larger than 32KiB to "
                        "achieve ideal bandwidth' (stated for Trainium/Inferentia2)"),
        duration("launch_overhead", &C::launch_overhead, "0 ns",
                 "per kernel: the runtime's launch -> the core's sequencer starts (doorbell, instruction "
                 "fetch, semaphore reset, DMA ring set-up); outside the profiled window (sim_time_ns), inside "
                 "the kernel's device latency (device_ns)")
            .calibrated("x0.5..x2", "the smallest whole-kernel latency published: nki-samples' global average "
                                    "pool (1x512x7x7 fp32) at 14 us p99 (test_adaptive_avg_pool2d.py; threshold = "
                                    "measured x 1.05), less the model's device time of a kernel of that size "
                                    "(docs/validation/silicon.md); the split among its parts is not public"),
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
