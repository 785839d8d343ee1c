#pragma once

#include "models/common/config.h"
#include "models/pe/engine_timing.h"

namespace nctlm {

// The PE of a NeuronCore (tensor/vector engines, SBUF, PSUM, the sequencer's DMA issue); mirrors
// `pe.*` in the platform YAML. Defaults are the trn1 (NeuronCore-v2) values.
struct PeConfig {
    // Tensor engine: a tensor_rows x tensor_cols systolic array on its own clock.
    Frequency tensor_clock;
    uint32_t tensor_rows = 0;             // contraction (partition) rows per matmul
    uint32_t tensor_cols = 0;             // most stationary columns
    uint32_t moving_max = 0;              // most moving columns per matmul
    uint32_t matmul_stationary_floor = 0; // the 64 in max(min(64, N_stationary), N_moving)
    uint32_t matmul_issue_cycles = 0;     // minimum gap between matmul issues
    uint32_t fp32_passes = 0;             // fp32 runs at 1/fp32_passes of the bf16 rate
    uint32_t matmul_overhead_cycles = 0;  // per-matmul static overhead left after pipelining
    uint32_t operand_buffers = 0;         // fetched-operand staging buffers in front of the array
    uint32_t fp8_speedup = 1;             // FP8 matmuls at this x the BF16 rate
    // Vector engine.
    Frequency vector_clock;
    uint32_t vector_min_cycles = 0;    // max(64, N)
    uint32_t vector_access_cycles = 0; // static SBUF/PSUM access overhead per instruction
    uint32_t vector_bf16_speedup = 1;  // performance mode for BF16/FP16 operands (engine_timing.h)
    // Scalar (activation) engine.
    Frequency scalar_clock;
    uint32_t scalar_lanes = 0;
    uint32_t scalar_min_cycles = 0;
    uint32_t scalar_access_cycles = 0;
    // SBUF and PSUM: partitioned memories, one port per partition.
    uint32_t sbuf_partitions = 0;
    uint64_t sbuf_partition_bytes = 0;
    Bandwidth sbuf_partition_bandwidth; // per partition, PE read side
    Duration sbuf_latency;
    uint64_t psum_partition_bytes = 0;
    uint32_t psum_banks = 0;
    Bandwidth psum_partition_bandwidth;
    Duration psum_latency;
    // DMA instructions the PE issues (2-D HBM <-> SBUF transfers through the tile's DmaEngine).
    uint64_t dma_descriptor_bytes = 0; // a DMA instruction is cut into descriptors of this size
    // Sequencer.
    Duration launch_overhead; // runtime's launch -> the sequencer starts (per kernel, outside the profile's span)
    Duration pipeline_fill; // kernel launch -> first instruction issued
    Duration pipeline_tail; // last completion -> kernel-done visible

    TensorTiming tensor_timing() const {
        return {matmul_stationary_floor, matmul_issue_cycles, fp32_passes, matmul_overhead_cycles, fp8_speedup};
    }
    VectorTiming vector_timing() const { return {vector_min_cycles, vector_access_cycles, vector_bf16_speedup}; }
    ScalarTiming scalar_timing() const { return {scalar_lanes, scalar_min_cycles, scalar_access_cycles}; }
    Duration scalar_op_time(uint32_t n, uint32_t partitions, uint32_t inputs = 1) const {
        return scalar_clock.cycles(scalar_op_cycles(n, partitions, scalar_timing(), inputs));
    }
    // One matmul instruction (issue to next issue) and one vector op, in time.
    Duration matmul_time(uint32_t n_stationary, uint32_t n_moving, Dtype dtype) const {
        return tensor_clock.cycles(matmul_cycles(n_stationary, n_moving, dtype, tensor_timing()));
    }
    Duration vector_op_time(uint32_t n, uint32_t inputs = 1, const VectorOperands& operands = {}) const {
        return vector_clock.cycles(vector_op_cycles(n, vector_timing(), inputs, operands));
    }
    uint64_t psum_bank_bytes() const { return psum_partition_bytes / psum_banks; }
    // The tensor engine's peak: rows x cols multiply-adds per cycle (fp32 at 1/fp32_passes).
    double peak_flops(Dtype d) const {
        double peak = 2.0 * tensor_rows * tensor_cols * tensor_clock.hz;
        return d == Dtype::Fp32 ? peak / fp32_passes : peak;
    }
    // Time to move `bytes` spread evenly over `partitions` partitions through their ports.
    Duration sbuf_transfer(double bytes, uint32_t partitions) const {
        return sbuf_partition_bandwidth.transfer(bytes / partitions);
    }
    Duration psum_transfer(double bytes, uint32_t partitions) const {
        return psum_partition_bandwidth.transfer(bytes / partitions);
    }
    static const FieldList<PeConfig>& fields();
};

} // namespace nctlm
