// The host CPU side: host memory buffers (pageable or pinned) and one host thread's copy rate,
// which depends on whether the copy's buffers fit in the last-level cache. Keeps the statistics of
// the CPU time spent copying and pinning.
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
    // Copying a tensor of `bytes` (working set: the tensor and its copy, 2 x bytes).
    Bandwidth tensor_copy_rate(uint64_t bytes) const;
    // Writing into a freshly allocated destination: every line misses, so the DRAM rate.
    Bandwidth fresh_copy_rate() const { return cfg_.memcpy_bandwidth; }
    // One whole-tensor CPU copy of `bytes` (the program's own, e.g. a clone), accounted as staging.
    Duration copy(uint64_t bytes);
    // Accounts host CPU time spent staging and pinning (the time itself is scheduled by the copy).
    void staged(uint64_t bytes, double memcpy_ns);
    void pinned(double pin_ns);

private:
    HostConfig cfg_;
    Counter& staged_bytes_;
    Counter& memcpy_ns_;
    Counter& pin_ns_;
};

} // namespace nctlm
