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

#include <utility>
#include <vector>

namespace nctlm {

// A link that books transfers ahead of time (a NoC route is booked hop by hop when a burst
// enters it) and lets a later booking use an idle gap before an earlier one. A plain
// BandwidthPipe would push every later booking behind the latest one, so links fed by routes
// of different lengths could never run at full rate. Not for HBM pseudo-channels: those must
// keep arrival order.
//
// Cost: the booked intervals are a sorted vector; finished ones are dropped from the front
// (amortized O(1)), the first interval that can matter is found by binary search (O(log n)), and
// only the gaps too short for the transfer are stepped over (n is the bookings still ahead, which
// the NoC's credits bound: the cost does not grow with the size of a transfer).
class LinkSchedule {
public:
    explicit LinkSchedule(Bandwidth bw = Bandwidth{1}) : ns_per_byte_(1e9 / bw.bytes_per_s) {}
    // Earliest slot of bytes ÷ bandwidth at or after ready_ns; `now_ns` lets finished intervals go.
    Occupancy reserve(double ready_ns, double bytes, double now_ns) {
        while (head_ < busy_.size() && busy_[head_].second <= now_ns)
            ++head_;
        if (head_ >= 32 && 2 * head_ >= busy_.size()) {  // compact once the dead prefix dominates
            busy_.erase(busy_.begin(), busy_.begin() + std::ptrdiff_t(head_));
            head_ = 0;
        }
        double length = bytes * ns_per_byte_;
        double start = ready_ns;
        busy_ns_ += length;
        bytes_ += bytes;
        if (head_ == busy_.size() || start >= busy_.back().second) {  // after every booking: append
            double end = start + length;
            if (head_ < busy_.size() && busy_.back().second == start)
                busy_.back().second = end;  // touching: merge, as below
            else
                busy_.push_back({start, end});
            return {start, end};
        }
        // The first interval still busy at `start` (intervals are disjoint: sorted by end too).
        auto it = std::upper_bound(busy_.begin() + std::ptrdiff_t(head_), busy_.end(), start,
                                   [](double t, const std::pair<double, double>& b) { return t < b.second; });
        for (; it != busy_.end(); ++it) {
            if (it->first - start >= length)
                break;
            start = std::max(start, it->second);
        }
        double end = start + length;
        // Insert [start, end) before `it`, merging with neighbours it touches.
        auto first = busy_.begin() + std::ptrdiff_t(head_);
        if (it != first && std::prev(it)->second >= start) {
            auto prev = std::prev(it);
            prev->second = std::max(prev->second, end);
            if (it != busy_.end() && it->first <= prev->second) {
                prev->second = std::max(prev->second, it->second);
                busy_.erase(it);
            }
        } else if (it != busy_.end() && it->first <= end) {
            it->first = start;
            it->second = std::max(it->second, end);
        } else {
            busy_.insert(it, {start, end});
        }
        return {start, end};
    }
    double busy_ns() const { return busy_ns_; }
    double bytes() const { return bytes_; }
    size_t bookings() const { return busy_.size() - head_; }  // intervals still ahead (merged)

private:
    double ns_per_byte_;
    std::vector<std::pair<double, double>> busy_;  // disjoint, sorted, merged when touching
    size_t head_ = 0;                              // busy_[0, head_) are finished
    double busy_ns_ = 0, bytes_ = 0;
};

} // namespace nctlm
