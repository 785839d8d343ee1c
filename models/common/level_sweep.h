// The occupancy of a queue whose entries are booked ahead of time, replayed in time order. The
// loosely-timed paths know, when a request arrives, the whole interval it will hold a credit or a
// queue entry ([from, to)), but the AT statistics (QueueStats: the level after every change, time
// full, the trace counter) expect the changes as they happen. LevelSweep keeps the pending changes
// and applies, on advance(t), every change at or before t in time order (at equal times,
// departures first: an entry leaving and another taking its place never reads as full).
// Exact as long as advance() is called with non-decreasing times and no interval starts before the
// last advance (the LT scheduler sends bursts in time order); a later call is clamped, not reordered.
// Pure C++: unit-tested without a kernel.
#pragma once

#include "models/common/nearly_sorted_queue.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <utility>
#include <vector>

namespace nctlm {

class LevelSweep {
public:
    // Called with (level after the change, time) for every change, in time order.
    using OnChange = std::function<void(size_t, double)>;
    explicit LevelSweep(OnChange on_change = {}) : on_change_(std::move(on_change)) {}

    // `n` entries occupy the queue over [from_ns, to_ns) (nothing if the interval is empty).
    void hold(double from_ns, double to_ns, size_t n = 1) {
        from_ns = std::max(from_ns, swept_ns_);
        if (!(to_ns > from_ns) || n == 0)
            return;
        out_.push({to_ns, n});
        next_ns_ = std::min(next_ns_, from_ns > swept_ns_ ? from_ns : to_ns);
        if (from_ns > swept_ns_) {
            in_.push({from_ns, n});
        } else {  // already due (the common case: a request takes its place as it arrives)
            level_ += n;
            if (on_change_)
                on_change_(level_, from_ns);
        }
    }
    // Applies every change at or before t_ns; returns the level at t_ns.
    size_t advance(double t_ns) {
        swept_ns_ = std::max(swept_ns_, t_ns);
        return next_ns_ > swept_ns_ ? level_ : apply_due();  // most calls: nothing due yet
    }
    size_t level() const { return level_; }

private:
    size_t apply_due() {
        while (true) {
            const Change* in = in_.front();
            const Change* out = out_.front();
            const bool leave = out && (!in || out->t <= in->t);  // departures first at equal times
            const Change* next = leave ? out : in;
            if (!next || next->t > swept_ns_) {
                next_ns_ = next ? next->t : std::numeric_limits<double>::infinity();
                return level_;
            }
            const Change c = *next;
            (leave ? out_ : in_).pop(next);
            level_ = leave ? level_ - c.n : level_ + c.n;
            if (on_change_)
                on_change_(level_, c.t);
        }
    }
    struct Change {
        double t;
        size_t n;
    };
    struct Later {
        bool operator()(const Change& a, const Change& b) const { return a.t > b.t; }
    };
    // Changes mostly come in time order (arrivals always, departures nearly).
    using Changes = NearlySortedQueue<Change, Later>;
    OnChange on_change_;
    Changes in_, out_;
    size_t level_ = 0;
    double swept_ns_ = 0;
    double next_ns_ = std::numeric_limits<double>::infinity();  // the earliest pending change
};

} // namespace nctlm
