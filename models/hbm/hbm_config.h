#pragma once

#include "models/common/config.h"

namespace nctlm {

// HBM stacks behind controllers; every key mirrors `hbm.*` in the platform YAML.
struct HbmConfig {
    uint32_t stacks = 0;
    uint64_t stack_capacity = 0;
    uint32_t pseudo_channels = 0;  // per stack
    Bandwidth pc_bandwidth;
    uint64_t interleave = 0;       // consecutive chunks of this size go to consecutive PCs
    uint64_t stack_interleave = 0; // granularity across stacks in the interleaved window
    uint64_t interleaved_base = 0; // start of the stack-interleaved address window
    Duration controller_latency;   // request arrival -> PC may start (front end + tRCD + CL)
    bool functional = false;       // store data (sparse pages) so read-back can be checked

    Bandwidth stack_bandwidth() const { return Bandwidth{pc_bandwidth.bytes_per_s * pseudo_channels}; }
    static const FieldList<HbmConfig>& fields();
};

} // namespace nctlm
