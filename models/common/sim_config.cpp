#include "models/common/sim_config.h"

namespace nctlm {

const FieldList<SimConfig>& SimConfig::fields() {
    using C = SimConfig;
    static const FieldList<C> f = {
        choice("timing", &C::timing, {{"at", TimingMode::At}, {"lt", TimingMode::Lt}, {"flow", TimingMode::Flow}}, "at",
               "at: 4-phase approximately-timed; lt: b_transport in global time order over the same timing models; "
               "flow: DMA descriptors as flows sharing bandwidth (coarser, faster)")
            .setting("simulator mode; lt is faster (docs/performance.md: error and speed table)"),
        duration("quantum", &C::quantum, "0 ns",
                 "lt only: how far past the kernel's next activity DMA bursts may be sent", 1e9)
            .setting("simulator mode; 0 keeps the AT order exactly (docs/performance.md: what a quantum changes)"),
        choice("flow_sharing", &C::flow_sharing, {{"in_order", FlowSharing::InOrder}, {"fair", FlowSharing::Fair}},
               "in_order",
               "flow only: in_order: the oldest flow takes what it can of each resource (requests served in order); "
               "fair: max-min with equal weights (processor sharing)")
            .setting("simulator mode; fair is the textbook flow model, kept as an ablation (docs/performance.md: "
                     "the flow mode's error)"),
        duration("time_limit", &C::time_limit, "1 s",
                 "stop the run as an error when simulated time passes this with work pending (at least 10x a "
                 "testbench's own duration)")
            .setting("a guard against implausible parameters; every shipped run ends below 10 ms"),
    };
    return f;
}

} // namespace nctlm
