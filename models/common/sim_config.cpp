#include "models/common/sim_config.h"

namespace nctlm {

const FieldList<SimConfig>& SimConfig::fields() {
    using C = SimConfig;
    static const FieldList<C> f = {
        choice("timing", &C::timing, {{"at", TimingMode::At}, {"lt", TimingMode::Lt}}, "at",
               "at: 4-phase approximately-timed; lt: b_transport + quantum keeper over the same timing models")
            .setting("simulator mode; lt trades accuracy for speed (docs/performance.md: error table)"),
        duration("quantum", &C::quantum, "100 ns",
                 "lt only: local time an initiator may run ahead of the kernel before it synchronizes")
            .setting("simulator mode; larger is faster, and less exact under contention"),
    };
    return f;
}

} // namespace nctlm
