#pragma once

#include "models/common/config.h"

namespace nctlm {

// Host, PCIe link and runtime; mirrors `host.*` in the platform YAML.
// Filled in by the host-dispatch work.
struct HostConfig {
    static const FieldList<HostConfig>& fields();
};

} // namespace nctlm
