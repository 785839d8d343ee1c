// The host CPU side: host memory buffers (pageable or pinned) and the CPU memcpy that stages a
// pageable tensor through the runtime's pinned bounce buffer. Keeps the staging statistics.
#pragma once

#include "models/common/stats.h"
#include "models/host/host_config.h"

#include <systemc>

namespace nctlm {

// A tensor's host memory. Pinned (page-locked) memory can be DMA'd directly; pageable memory
// must be copied through a pinned bounce buffer first.
struct HostBuffer {
    uint64_t bytes = 0;
    bool pinned = false;
};

class Host : public sc_core::sc_module {
public:
    Host(sc_core::sc_module_name name, const HostConfig& cfg);
    Bandwidth memcpy_bandwidth() const { return cfg_.memcpy_bandwidth; }
    // Accounts host CPU time spent staging (the time itself is scheduled by the copy).
    void staged(uint64_t bytes, double memcpy_ns);

private:
    HostConfig cfg_;
    Counter& staged_bytes_;
    Counter& memcpy_ns_;
};

} // namespace nctlm
