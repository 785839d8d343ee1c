// LinkSchedule (models/common/bandwidth_pipe.h): earliest fitting gap, merging, pruning of the past.
#include "models/common/bandwidth_pipe.h"

#include <gtest/gtest.h>

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
