// Measures one pseudo-channel of the banked HBM model (PcScheduler) under a closed-loop load, as
// the AT controller drives it: a request is admitted into its PC queue when there is room (else it
// waits in arrival order, as in the ingress buffer), the scheduler decides at next_decision_ns(),
// reads answer at their last data byte and posted writes at admission, and the initiator issues
// its next request when one is answered (`window` outstanding). Pure C++, no kernel: the flow
// mode's capacities and latencies come from it (flow_table.h, `nctlm calibrate flow`), and
// tests/unit/test_flow_table.cpp holds it to the AT traffic testbench (path=hbm) on the same load.
#pragma once

#include "models/hbm/hbm_config.h"

#include <cstdint>

namespace nctlm::flow {

enum class PcPattern { Sequential, Random };

struct PcLoad {
    uint64_t request_bytes = 2048;  // <= hbm.interleave: one PC chunk at most
    PcPattern pattern = PcPattern::Sequential;
    double read_fraction = 1;
    uint32_t window = 1;     // requests outstanding at the PC
    // Sequential: this many streams, each through its own region of the PC, their requests taken in
    // turn (tiles streaming through one PC at once: each reopens rows the others closed).
    uint32_t streams = 1;
    double duration_ns = 20000, warmup_ns = 2000;
    uint64_t seed = 1;
};

struct PcMeasure {
    double bandwidth = 0;       // B/ns of requests whose last byte lands in [warmup, duration]
    double read_latency = 0;    // mean, arrival -> last data byte, of those reads
    uint64_t requests = 0;
};

PcMeasure measure_pc(const HbmConfig& hbm, const PcLoad& load);

// One request on a cold PC (banks precharged, no refresh yet): arrival -> last data byte of a read,
// or -> its acceptance (posted) for a write.
double cold_latency(const HbmConfig& hbm, uint64_t request_bytes, bool write);

} // namespace nctlm::flow
