// A resource that moves bytes at a fixed rate, one transfer at a time: an HBM pseudo-channel,
// a NoC link, a DMA data path. Keeps `available_at` and busy time. Pure C++, times in ns.
#pragma once

#include "models/common/units.h"

#include <algorithm>

namespace nctlm {

struct Occupancy {
    double start_ns, end_ns;
};

class BandwidthPipe {
public:
    explicit BandwidthPipe(Bandwidth bw = Bandwidth{1}) : ns_per_byte_(1e9 / bw.bytes_per_s) {}
    // Occupies the pipe for bytes ÷ bandwidth, from when both the data and the pipe are ready.
    Occupancy reserve(double ready_ns, double bytes) {
        double start = std::max(ready_ns, available_at_);
        double end = start + bytes * ns_per_byte_;
        available_at_ = end;
        busy_ns_ += end - start;
        bytes_ += bytes;
        return {start, end};
    }
    double available_at() const { return available_at_; }
    double busy_ns() const { return busy_ns_; }
    double bytes() const { return bytes_; }

private:
    double ns_per_byte_;
    double available_at_ = 0, busy_ns_ = 0, bytes_ = 0;
};

} // namespace nctlm
