#include "models/pe/pe_config.h"

namespace nctlm {

const FieldList<PeConfig>& PeConfig::fields() {
    static const FieldList<PeConfig> f = {};
    return f;
}

} // namespace nctlm
