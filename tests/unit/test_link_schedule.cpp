// LinkSchedule (models/common/bandwidth_pipe.h): earliest fitting gap, merging, pruning of the past.
#include "models/common/bandwidth_pipe.h"
#include "tests/xorshift.h"

#include <algorithm>
#include <gtest/gtest.h>
#include <utility>
#include <vector>

using namespace nctlm;

TEST(LinkSchedule, LaterBookingFillsAnEarlierGap) {
    LinkSchedule l(Bandwidth{1e9});  // 1 B/ns
    Occupancy a = l.reserve(100, 10, 0);  // [100, 110)
    EXPECT_EQ(a.start_ns, 100);
    Occupancy b = l.reserve(0, 20, 0);  // fits before: [0, 20)
    EXPECT_EQ(b.start_ns, 0);
    EXPECT_EQ(b.end_ns, 20);
    Occupancy c = l.reserve(15, 90, 0);  // no gap of 90 before 110: after it
    EXPECT_EQ(c.start_ns, 110);
    Occupancy d = l.reserve(15, 80, 0);  // [20, 100) exactly fills the gap
    EXPECT_EQ(d.start_ns, 20);
    EXPECT_EQ(d.end_ns, 100);
    EXPECT_EQ(l.bookings(), 1u);  // all merged: [0, 200)
}

TEST(LinkSchedule, FinishedBookingsAreDroppedSoCostStaysBounded) {
    LinkSchedule l(Bandwidth{1e9});
    // A long stream of separated bookings, each booked when the previous ones are over.
    for (int i = 0; i < 100000; ++i) {
        Occupancy o = l.reserve(10.0 * i, 5, 10.0 * i);
        ASSERT_EQ(o.start_ns, 10.0 * i);
        ASSERT_LE(l.bookings(), 2u);
    }
    EXPECT_EQ(l.bytes(), 500000);
}

namespace {
// The booking rule spelled out plainly (every interval kept, no merging, no pruning, no append
// shortcut): the earliest start at or after ready with a gap of the transfer's length.
struct PlainSchedule {
    std::vector<std::pair<double, double>> busy;  // sorted by start
    double ns_per_byte;
    Occupancy reserve(double ready, double bytes) {
        double length = bytes * ns_per_byte, start = ready;
        for (auto& b : busy) {
            if (b.second <= start)
                continue;
            if (b.first - start >= length)
                break;
            start = std::max(start, b.second);
        }
        std::pair<double, double> b{start, start + length};
        busy.insert(std::lower_bound(busy.begin(), busy.end(), b), b);
        return {start, start + length};
    }
};
} // namespace

// LinkSchedule (merging, pruning, the append shortcut) books exactly like the plain rule, on a mix
// of bookings in time order (the append path) and out of order (the gap search).
TEST(LinkSchedule, EqualsThePlainRuleInAndOutOfOrder) {
    LinkSchedule l(Bandwidth{1024e9});
    PlainSchedule plain{{}, 1e9 / 1024e9};
    nctlm::test::XorShift64 next{12345};
    double now = 0;
    for (int i = 0; i < 5000; ++i) {
        now += double(next() % 8) * 0.0625;
        double ready = now + (next() % 4 == 0 ? double(next() % 64) * 0.7 : 0);
        double bytes = next() % 2 ? 64 : 2048;
        Occupancy a = l.reserve(ready, bytes, now), b = plain.reserve(ready, bytes);
        ASSERT_EQ(a.start_ns, b.start_ns) << "booking " << i;
        ASSERT_EQ(a.end_ns, b.end_ns) << "booking " << i;
    }
}
