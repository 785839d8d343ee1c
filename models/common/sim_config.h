#pragma once

#include "models/common/config.h"

namespace nctlm {

// How transactions reach the timing models (docs/performance.md, "Loosely-timed mode").
//   at: TLM-2.0 base protocol, 4 phases with payload event queues (END_REQ back-pressure).
//   lt: DMA bursts go through b_transport with a quantum keeper; the NoC links and the HBM
//       pseudo-channels compute their timing from the same resource models as under at.
enum class TimingMode { At, Lt };

// `sim.*`: switches of the simulator, not claims about the hardware.
struct SimConfig {
    TimingMode timing = TimingMode::At;
    Duration quantum;  // lt: how far an initiator's local time may run ahead of the kernel's

    static const FieldList<SimConfig>& fields();
};

} // namespace nctlm
