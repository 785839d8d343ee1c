// A kernel program with its arguments bound: every tensor's shape and size, every buffer's place
// in SBUF or PSUM (per-partition byte offsets), checked against the PE (partitions, capacity, PSUM
// banks). HBM addresses are the caller's (the platform decides where stacks are): fill
// TensorLayout::base. Pure C++.
#pragma once

#include "models/kernel/kernel_program.h"
#include "models/pe/pe_config.h"

#include <cstdint>
#include <vector>

namespace nctlm::kernel {

struct BufferLayout {
    Memory memory = Memory::Sbuf;
    uint32_t partitions = 0, bufs = 1;
    std::vector<uint64_t> shape;   // free dimensions
    uint64_t elem_bytes = 0;
    uint64_t copy_bytes = 0;       // one copy, per partition
    uint64_t offset = 0;           // copy 0's byte offset inside each partition
    uint64_t bank_bytes = 0;       // PSUM: copies pack per_bank to a bank, never across one
    uint64_t per_bank = 0;
    uint64_t elements() const;     // per partition, one copy
    uint64_t copy_offset(uint32_t copy) const {
        return memory == Memory::Psum ? offset + copy / per_bank * bank_bytes + copy % per_bank * copy_bytes
                                      : offset + uint64_t(copy) * copy_bytes;
    }
};

struct TensorLayout {
    std::vector<uint64_t> shape;
    uint64_t elem_bytes = 0;
    uint64_t bytes = 0;
    std::vector<uint64_t> base;    // HBM address per instance (one entry unless per_instance)
    std::vector<uint64_t> offsets; // explicit placement (Tensor::offset) per instance; empty: sequential
    // 0 before the platform placed it (checking a program needs no addresses).
    uint64_t address(uint32_t instance) const {
        return base.empty() ? 0 : base.size() == 1 ? base[0] : base.at(instance);
    }
};

struct Layout {
    std::vector<int64_t> vars;     // the variable array: arguments bound, pid and loop slots 0
    uint32_t grid = 1;
    std::vector<BufferLayout> buffers;
    std::vector<TensorLayout> tensors;
    uint64_t sbuf_bytes = 0, psum_bytes = 0;  // per partition, all buffers
};

// Throws KernelError naming the tensor/buffer and what would fit. `max_grid`: NeuronCores available.
Layout make_layout(const KernelProgram& p, const PeConfig& pe, uint32_t max_grid);

} // namespace nctlm::kernel
