#pragma once

#include "models/common/config.h"

namespace nctlm {

// How transactions reach the timing models (docs/performance.md, "Loosely-timed mode").
//   at: TLM-2.0 base protocol, 4 phases with payload event queues (END_REQ back-pressure).
//   lt: DMA bursts go through b_transport, all tiles' in global time order (DmaLtScheduler); the
//       NoC links and the HBM pseudo-channels compute their timing from the same resource models.
//   flow: each DMA descriptor is one flow sharing the DMA data path, NoC links and HBM
//       pseudo-channels by max-min fairness (models/flow), capacities measured on the banked model;
//       coarser, its error against AT measured over a corpus (docs/performance.md, "Flow mode").
enum class TimingMode { At, Lt, Flow };

// `sim.*`: switches of the simulator, not claims about the hardware.
enum class FlowSharing { InOrder, Fair };

struct SimConfig {
    TimingMode timing = TimingMode::At;
    Duration quantum;  // lt: how far past the kernel's next activity bursts may be sent
    FlowSharing flow_sharing = FlowSharing::InOrder;  // flow: how flows share a resource
    // A run still busy at this simulated time is stopped as an error: an implausible parameter
    // (a link at 1 B/s) would otherwise keep the kernel ticking refreshes for hours. A testbench
    // with a duration of its own gets at least ten times that (Testbench::duration_ns).
    Duration time_limit;

    static const FieldList<SimConfig>& fields();
};

} // namespace nctlm
