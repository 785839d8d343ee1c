// A collective running on the platform: each rank's program (make_rank_program) on its NeuronCore,
// and the cross-rank synchronization its sync unit asks for (Program::barrier): a wait blocks the
// rank's sync unit until the transfers it reads have landed; a signal posts a flag write of
// `flag_bytes` to each remote destination rank on the rank's own DMA engine (through the NoC and
// NeuronLink like the data), and the transfer has landed there when that write completes.
// Not a module: the ranks' PEs are the platform's; a graph runner calls execute(rank) from the
// thread that drives that core, a testbench start() to run all ranks at once.
#pragma once

#include "models/collective/collective_program.h"
#include "models/pe/processing_element.h"

#include <deque>
#include <memory>
#include <string>
#include <systemc>
#include <vector>

namespace nctlm::collective {

class CollectiveRun {
public:
    // `pes[r]`: rank r's NeuronCore; `memory[r]`: its buffers. Builds every rank's program now
    // (throws std::invalid_argument when the tiles do not fit SBUF).
    CollectiveRun(Schedule schedule, std::vector<RankMemory> memory, std::vector<ProcessingElement*> pes,
                  const ProgramOptions& options, uint64_t flag_bytes);
    CollectiveRun(const CollectiveRun&) = delete;
    CollectiveRun& operator=(const CollectiveRun&) = delete;

    // Runs rank r's program to completion; call from a SystemC thread (every rank must be run).
    PeRunRecord execute(uint32_t rank);
    // Spawns one thread per rank that runs it now.
    void start(const std::string& name = "collective");

    const Schedule& schedule() const { return schedule_; }
    const RankProgram& program(uint32_t rank) const { return programs_.at(rank); }
    uint32_t ranks() const { return schedule_.spec.ranks; }
    bool finished() const { return finished_ == ranks(); }
    double start_ns() const { return start_ns_; }
    double end_ns() const { return end_ns_; }  // the last rank done (pipeline tail included)
    const std::vector<PeRunRecord>& records() const { return records_; }
    uint64_t flags_sent() const { return flags_sent_; }
    // Units still waiting at the end (a deadlock report): "rank 3 waits for transfer 17 of rank 2".
    std::vector<std::string> blocked() const;

private:
    void barrier(uint32_t rank);
    bool has_landed(uint32_t transfer, uint32_t at_rank) const;

    Schedule schedule_;
    std::vector<RankMemory> memory_;
    std::vector<ProcessingElement*> pes_;
    uint64_t flag_bytes_;
    uint32_t flag_queue_;
    std::vector<RankProgram> programs_;
    std::vector<size_t> next_action_;
    std::vector<uint8_t> landed_;  // per transfer, a bit per destination
    sc_core::sc_event landed_event_;
    std::deque<DmaDescriptor> flags_;
    std::vector<DmaDescriptor*> free_flags_;
    std::vector<PeRunRecord> records_;
    std::vector<int64_t> waiting_for_;  // per rank: the transfer its sync unit waits for, or -1
    uint32_t finished_ = 0, started_ = 0;
    double start_ns_ = -1, end_ns_ = 0;
    uint64_t flags_sent_ = 0;
};

} // namespace nctlm::collective
