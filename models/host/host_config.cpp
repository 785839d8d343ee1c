#include "models/host/host_config.h"

namespace nctlm {

const FieldList<HostConfig>& HostConfig::fields() {
    static const FieldList<HostConfig> f = {};
    return f;
}

} // namespace nctlm
