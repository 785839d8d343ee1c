#include "models/common/sim_config.h"

namespace nctlm {

const FieldList<SimConfig>& SimConfig::fields() {
    using C = SimConfig;
    static const FieldList<C> f = {
        choice("timing", &C::timing, {{"at", TimingMode::At}, {"lt", TimingMode::Lt}}, "at",
               "at: 4-phase approximately-timed; lt: b_transport in global time order over the same timing models")
            .setting("simulator mode; lt is faster (docs/performance.md: error and speed table)"),
        duration("quantum", &C::quantum, "0 ns",
                 "lt only: how far past the kernel's next activity DMA bursts may be sent", 1e9)
            .setting("simulator mode; 0 keeps the AT order exactly (docs/performance.md: what a quantum changes)"),
        duration("time_limit", &C::time_limit, "1 s",
                 "stop the run as an error when simulated time passes this with work pending (at least 10x a "
                 "testbench's own duration)")
            .setting("a guard against implausible parameters; every shipped run ends below 10 ms"),
    };
    return f;
}

} // namespace nctlm
