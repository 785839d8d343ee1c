#pragma once

#include "models/common/config.h"

namespace nctlm {

// The PE of a NeuronCore (tensor/vector engines, SBUF, PSUM); mirrors `pe.*` in the platform YAML.
// Filled in by the GEMM-pipeline work.
struct PeConfig {
    static const FieldList<PeConfig>& fields();
};

} // namespace nctlm
