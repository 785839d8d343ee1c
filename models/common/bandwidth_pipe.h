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

#include <deque>
#include <utility>

namespace nctlm {

// A link that books transfers ahead of time (a NoC route is booked hop by hop when a burst
// enters it) and lets a later booking use an idle gap before an earlier one. A plain
// BandwidthPipe would push every later booking behind the latest one, so links fed by routes
// of different lengths could never run at full rate. Not for HBM pseudo-channels: those must
// keep arrival order.
class LinkSchedule {
public:
    explicit LinkSchedule(Bandwidth bw = Bandwidth{1}) : ns_per_byte_(1e9 / bw.bytes_per_s) {}
    // Earliest slot of bytes ÷ bandwidth at or after ready_ns; `now_ns` lets finished intervals go.
    Occupancy reserve(double ready_ns, double bytes, double now_ns) {
        while (!busy_.empty() && busy_.front().second <= now_ns)
            busy_.pop_front();
        double length = bytes * ns_per_byte_;
        double start = ready_ns;
        auto it = busy_.begin();
        while (it != busy_.end() && it->second <= start)
            ++it;
        for (; it != busy_.end(); ++it) {
            if (it->first - start >= length)
                break;
            start = std::max(start, it->second);
        }
        double end = start + length;
        // Insert [start, end) before `it`, merging with neighbours it touches.
        auto pos = busy_.insert(it, {start, end});
        if (pos != busy_.begin() && std::prev(pos)->second >= start) {
            std::prev(pos)->second = std::max(std::prev(pos)->second, end);
            pos = std::prev(busy_.erase(pos));
        }
        auto next = std::next(pos);
        if (next != busy_.end() && next->first <= pos->second) {
            pos->second = std::max(pos->second, next->second);
            busy_.erase(next);
        }
        busy_ns_ += length;
        bytes_ += bytes;
        return {start, end};
    }
    double busy_ns() const { return busy_ns_; }
    double bytes() const { return bytes_; }

private:
    double ns_per_byte_;
    std::deque<std::pair<double, double>> busy_;  // disjoint, sorted, merged when touching
    double busy_ns_ = 0, bytes_ = 0;
};

} // namespace nctlm
