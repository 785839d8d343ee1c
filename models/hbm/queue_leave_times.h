// When a request may enter a pseudo-channel's read or write queue under LT (hbm_controller_lt.cpp).
// The AT controller admits a request once its column accesses fit beside those still queued
// (PcScheduler::has_room: used + accesses <= capacity, or the queue empty). Under LT a PC decides
// its requests in arrival order, so those still queued at a time t are the newest ones whose
// decision lies after t; this keeps, newest first, each recent request's decision time and entry
// count, and answers from them when a new request of n entries finds room. Sizes may differ (an
// unaligned transfer's short first and last bursts beside whole ones): counting requests of the
// newcomer's size instead let a 4-entry tail enter a queue full of 32-entry bursts at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace nctlm {

class QueueLeaveTimes {
public:
    // `capacity`: the queue's entries (0: one request at a time, as has_room() with an empty queue).
    void reset(size_t capacity) {
        capacity_ = capacity;
        size_t n = 1;
        while (n < capacity + 1)
            n <<= 1;
        ring_.assign(n, Left{});
        mask_ = n - 1;
        head_ = size_ = same_ = 0;
    }
    // The earliest time a request of `entries` has room (0: at once), given every request pushed
    // before it is ahead of it in the queue.
    double room(uint32_t entries) const {
        if (size_ == 0)
            return 0;
        if (entries == newest().entries) {  // requests of one size (the common case): index directly
            const size_t depth = entries > capacity_ ? 1 : capacity_ / entries;
            if (depth <= same_)
                return nth_newest(depth).t;
        }
        uint64_t held = 0;
        for (size_t k = 1; k <= size_; ++k) {  // the k newest still queued until the k-th leaves
            held += nth_newest(k).entries;
            if (held + entries > capacity_)
                return nth_newest(k).t;
        }
        return 0;
    }
    // A request of `entries` leaves the queue at `t` (its decision).
    void push(double t, uint32_t entries) {
        same_ = size_ > 0 && newest().entries == entries ? same_ + 1 : 1;
        ring_[(head_ + size_) & mask_] = Left{t, entries};
        if (++size_ > capacity_ + 1) {  // each holds >= 1 entry: older ones can no longer decide room
            head_ = (head_ + 1) & mask_;
            --size_;
        }
        if (same_ > size_)
            same_ = size_;
    }

private:
    struct Left {
        double t = 0;
        uint32_t entries = 1;
    };
    const Left& nth_newest(size_t k) const { return ring_[(head_ + size_ - k) & mask_]; }  // k: 1..size
    const Left& newest() const { return nth_newest(1); }
    std::vector<Left> ring_;
    size_t capacity_ = 0, mask_ = 0, head_ = 0, size_ = 0;
    size_t same_ = 0;  // how many of the newest have the newest's entry count
};

} // namespace nctlm
