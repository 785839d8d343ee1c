#pragma once

#include "models/common/config.h"

namespace nctlm {

// The network-on-chip; every key mirrors `noc.*` in the platform YAML.
struct NocConfig {
    Frequency clock;
    uint32_t hop_cycles = 0;       // router + wire latency per link traversed
    Bandwidth link_bandwidth;      // tile<->router and router<->stack links, per direction
    Bandwidth ring_bandwidth;      // router<->router links, per direction
    uint64_t request_bytes = 0;    // header flit of a request or a write acknowledgement
    uint32_t port_buffer = 0;      // requests in flight toward one stack port (credits)

    Duration hop_latency() const { return clock.cycles(hop_cycles); }
    static const FieldList<NocConfig>& fields();
};

} // namespace nctlm
