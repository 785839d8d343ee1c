// A collective schedule lowered onto one rank's NeuronCore (pure C++): every transfer becomes, per
// SBUF tile, DMA loads of its source (and addend) from the rank's HBM, a vector-engine add for a
// reduction, and DMA stores to its destinations (the rank's own HBM, or another rank's - on another
// chip through the NoC and NeuronLink). Cross-rank ordering goes through the PE's sync unit:
//   wait(t):   before t's loads, until every transfer of another rank that t reads has landed;
//   signal(u): after u's stores completed, a small flag write to each remote destination rank
//              (through the same DMA, NoC and links); u has landed there when that write is done.
// The runtime (CollectiveRun) executes both through Program::barrier, in `sync` order.
// A wait is placed ahead of earlier signals only when everything it waits for is of an earlier
// round than theirs, which keeps every rank's sync queue free of cycles (docs/models/collective.md).
#pragma once

#include "models/collective/collective_schedule.h"
#include "models/pe/instruction.h"
#include "models/pe/pe_config.h"

#include <cstdint>
#include <vector>

namespace nctlm::collective {

// Where a rank's buffers are (platform addresses: another chip's HBM is at its chip's window).
struct RankMemory {
    uint64_t input = 0, output = 0, scratch = 0, flags = 0;
    uint64_t at(const Region& r) const;
};

struct ProgramOptions {
    uint64_t tile_partition_bytes = 8192;  // SBUF bytes per partition of one tile (x 128 partitions)
    uint32_t buffers = 3;                  // rotating copies of each tile buffer
    uint64_t descriptor_bytes = 65536;     // DMA descriptor (CC packet) size
    uint32_t dma_queues = 16;
    Dtype dtype = Dtype::Fp32;             // what a reduction adds
};

struct SyncAction {
    bool wait = false;  // wait for the transfer's remote inputs; else signal its remote outputs
    uint32_t transfer = 0;
};

struct RankProgram {
    nctlm::Program program;           // without `barrier`: the runtime sets it
    std::vector<SyncAction> sync;     // what each Op::Barrier of the program does, in order
    uint64_t loads = 0, stores = 0, adds = 0, load_bytes = 0, store_bytes = 0;
};

// The SBUF bytes per partition the tiles need ((2 or 3) buffers x copies x tile bytes).
uint64_t sbuf_bytes_needed(const Schedule& s, const ProgramOptions& o);

// Throws std::invalid_argument when the tiles do not fit SBUF.
RankProgram make_rank_program(const Schedule& s, uint32_t rank, const std::vector<RankMemory>& memory,
                              const PeConfig& pe, const ProgramOptions& o);

} // namespace nctlm::collective
