// The PE's instruction stream: per-unit in-order queues synchronized by counting semaphores, as
// on the NeuronCore (each engine runs its own stream; semaphores order them). Pure C++.
#pragma once

#include "models/pe/engine_timing.h"

#include <cstdint>
#include <string>
#include <vector>

namespace nctlm {

// The in-order queue that executes an instruction.
enum class Unit { DmaIn, Fetch, Tensor, Vector, DmaOut, Scalar };
constexpr int kUnits = 6;

// Copy: PSUM -> SBUF evacuation; VectorOp: a vector-engine op over n_free elements per partition
// with `inputs` operands; Activation: a scalar-engine op (exp, reciprocal, scale) over n_free.
enum class Op { DmaRead, DmaWrite, Fetch, Matmul, Copy, VectorOp, Activation };

// Pipeline stage an instruction belongs to (for per-tile timing records).
enum class Stage { Weights, DmaIn, Fetch, Gemm, Evacuate, WriteBack };
constexpr int kStages = 6;
const char* stage_name(Stage s);

struct SemWait {
    uint32_t sem;
    uint64_t value; // proceed once the semaphore has reached this count
};

struct Instruction {
    Op op = Op::Fetch;
    Unit unit = Unit::Fetch;
    Stage stage = Stage::Fetch;
    uint32_t tile = 0;
    std::vector<SemWait> waits;
    int signal = -1; // semaphore incremented on completion, or -1
    // DMA: HBM address and bytes (the SBUF side is implied by the buffer slot).
    uint64_t address = 0, bytes = 0;
    uint32_t queue = 0;
    // SBUF/PSUM side: partitions touched and offset inside each partition.
    uint32_t partitions = 0;
    uint64_t offset = 0;
    uint64_t psum_bytes = 0; // Matmul: accumulator bytes written; Copy: read from PSUM
    // Matmul / Copy shape.
    uint32_t n_stationary = 0, n_moving = 0, k_rows = 0, n_free = 0;
    Dtype dtype = Dtype::Bf16;
    // VectorOp / Activation: operands per element; SBUF bytes read besides the PSUM read.
    uint32_t inputs = 1;
    uint64_t sbuf_read_bytes = 0;
    // DMA: descriptor size (0: pe.dma_descriptor_bytes); contiguous 1-D transfers skip the 2-D issue
    // pacing (pe.dma_bandwidth) and spread their descriptors round robin over the queues from `queue`.
    uint64_t descriptor_bytes = 0;
    bool contiguous = false;
};

struct Program {
    std::vector<Instruction> instructions;
    uint32_t semaphores = 0;
    uint32_t tiles = 0;
};

} // namespace nctlm
