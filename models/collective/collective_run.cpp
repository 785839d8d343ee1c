#include "models/collective/collective_run.h"

#include "models/common/sim.h"

#include <fmt/format.h>

namespace nctlm::collective {

CollectiveRun::CollectiveRun(Schedule schedule, std::vector<RankMemory> memory, std::vector<ProcessingElement*> pes,
                             const ProgramOptions& options, uint64_t flag_bytes)
    : schedule_(std::move(schedule)), memory_(std::move(memory)), pes_(std::move(pes)), flag_bytes_(flag_bytes),
      flag_queue_(options.dma_queues - 1), next_action_(schedule_.spec.ranks, 0),
      landed_(schedule_.transfers.size(), 0), records_(schedule_.spec.ranks),
      waiting_for_(schedule_.spec.ranks, -1) {
    if (pes_.size() != ranks() || memory_.size() != ranks())
        throw std::invalid_argument("a collective run needs one NeuronCore and one memory layout per rank");
    for (uint32_t r = 0; r < ranks(); ++r) {
        programs_.push_back(make_rank_program(schedule_, r, memory_, pes_[r]->config(), options));
        programs_.back().program.barrier = [this, r] { barrier(r); };
    }
}

bool CollectiveRun::has_landed(uint32_t transfer, uint32_t at_rank) const {
    const Transfer& t = schedule_.transfers[transfer];
    for (size_t i = 0; i < t.dests.size(); ++i)
        if (t.dests[i].rank == at_rank)
            return (landed_[transfer] >> i) & 1u;
    return true;  // not a destination of it: nothing to wait for
}

void CollectiveRun::barrier(uint32_t rank) {
    const SyncAction a = programs_[rank].sync.at(next_action_[rank]++);
    const Transfer& t = schedule_.transfers[a.transfer];
    if (a.wait) {
        for (uint32_t d : t.after) {
            if (schedule_.transfers[d].rank == rank)
                continue;
            waiting_for_[rank] = d;
            while (!has_landed(d, rank))
                sc_core::wait(landed_event_);
        }
        waiting_for_[rank] = -1;
        return;
    }
    for (size_t i = 0; i < t.dests.size(); ++i) {
        const uint32_t q = t.dests[i].rank;
        if (q == rank)
            continue;
        DmaDescriptor* d;
        if (free_flags_.empty()) {
            d = &flags_.emplace_back();
        } else {
            d = free_flags_.back();
            free_flags_.pop_back();
        }
        *d = DmaDescriptor{};
        d->address = memory_[q].flags + (a.transfer % 64) * flag_bytes_;
        d->bytes = flag_bytes_;
        d->write = true;
        d->queue = flag_queue_;
        const uint32_t transfer = a.transfer;
        d->on_complete = [this, transfer, i](DmaDescriptor& done) {
            landed_[transfer] |= uint8_t(1u << i);
            landed_event_.notify(sc_core::SC_ZERO_TIME);
            free_flags_.push_back(&done);
        };
        ++flags_sent_;
        pes_[rank]->post_dma(*d);
    }
}

PeRunRecord CollectiveRun::execute(uint32_t rank) {
    if (start_ns_ < 0)
        start_ns_ = now_ns();
    ++started_;
    records_[rank] = pes_[rank]->execute(programs_[rank].program);
    end_ns_ = std::max(end_ns_, records_[rank].end_ns);
    ++finished_;
    return records_[rank];
}

void CollectiveRun::start(const std::string& name) {
    for (uint32_t r = 0; r < ranks(); ++r)
        sc_core::sc_spawn([this, r] { execute(r); }, fmt::format("{}_rank{}", name, r).c_str());
}

std::vector<std::string> CollectiveRun::blocked() const {
    std::vector<std::string> lines;
    for (uint32_t r = 0; r < ranks(); ++r)
        if (waiting_for_[r] >= 0) {
            const Transfer& t = schedule_.transfers[size_t(waiting_for_[r])];
            lines.push_back(fmt::format("rank {} waits for transfer {} of rank {} (round {}, slice {})", r,
                                        waiting_for_[r], t.rank, t.round, t.slice));
        }
    return lines;
}

} // namespace nctlm::collective
