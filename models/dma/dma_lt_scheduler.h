// Loosely-timed issue for every DMA engine of a platform (sim.timing: lt), in one process.
//
// Each engine's next burst has a time (its front descriptor's turn on the request socket). The
// scheduler sends the earliest one with b_transport, then the next earliest, without giving the
// kernel control, for as long as nothing else in the simulation can happen first: up to the
// kernel's next pending activity (sc_time_to_pending_activity: a PE instruction ending, a
// completion becoming visible, a host event), plus `sim.quantum`. So bursts of all tiles reach
// the NoC and HBM in global time order, as under AT, and a burst whose time lies before the next
// activity cannot be affected by it. With quantum 0 the order is exact; a quantum lets bursts run
// ahead of events that might have posted earlier work (docs/performance.md: error table).
//
// Why not one tlm_quantumkeeper per engine: each engine then runs a quantum ahead on its own, and
// the tiles' requests reach shared pseudo-channels in process order within it. Measured, a 1 ns
// quantum already moved GQA G4 on trn2 by +7.6 % (row hits of interleaved streams).
#pragma once

#include <cstdint>
#include <queue>
#include <systemc>
#include <vector>

namespace nctlm {

class DmaEngine;

class DmaLtScheduler : public sc_core::sc_module {
public:
    SC_HAS_PROCESS(DmaLtScheduler);
    // `lookahead_ns`: how far past the kernel's next activity a burst may be sent (sim.quantum).
    DmaLtScheduler(sc_core::sc_module_name name, double lookahead_ns);

    void add(DmaEngine& e);      // during elaboration
    void posted(DmaEngine& e);   // a descriptor was posted to `e` (any process, kernel time now)

private:
    struct Next {
        double t;
        uint64_t order;  // ties: first queued first
        DmaEngine* engine;
        bool operator>(const Next& o) const { return t > o.t || (t == o.t && order > o.order); }
    };
    void run();
    void queue(DmaEngine& e);

    double lookahead_ns_;
    std::vector<DmaEngine*> posted_;
    std::priority_queue<Next, std::vector<Next>, std::greater<Next>> next_;
    uint64_t order_ = 0;
    sc_core::sc_event work_;
};

} // namespace nctlm
