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
    };
    return f;
}

} // namespace nctlm
