// The descriptors of a PE DMA instruction: its HBM side cut into contiguous runs (an access
// pattern's innermost dimensions merge while they are contiguous), each run cut into pieces of at
// most `chunk` bytes. A contiguous instruction (no pattern) is one run. Pure C++.
#pragma once

#include "models/dma/dma_cost.h"
#include "models/pe/instruction.h"

#include <cstdint>
#include <utility>
#include <vector>

namespace nctlm {

struct DmaRun {
    uint64_t address, bytes;
};

// Contiguous bytes per run of the pattern (the merged innermost dimensions) and the number of runs.
std::pair<uint64_t, uint64_t> dma_run_shape(const Instruction& ins);

// The instruction as the DMA engines see it: bytes, contiguous HBM run, SBUF partitions.
DmaTransferShape dma_transfer_shape(const Instruction& ins);

// Appends every descriptor's (address, bytes) in order; returns how many.
size_t dma_descriptors(const Instruction& ins, uint64_t chunk, std::vector<DmaRun>& out);

// Descriptors without listing them.
uint64_t dma_descriptor_count(const Instruction& ins, uint64_t chunk);

} // namespace nctlm
