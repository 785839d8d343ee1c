// SlotTimes (the LT paths' credits and buffer slots) against the linear scan it replaced.
#include "models/common/slot_times.h"

#include <algorithm>
#include <gtest/gtest.h>
#include <random>
#include <vector>

using nctlm::SlotTimes;

TEST(SlotTimes, EarliestIsTheMinimumAndBookingReplacesIt) {
    SlotTimes s;
    s.assign(3, 0);
    s.book_earliest(5);
    s.book_earliest(2);
    EXPECT_EQ(s.earliest(), 0);
    s.book_earliest(9);
    EXPECT_EQ(s.earliest(), 2);
    EXPECT_EQ(s.size(), 3u);
}

TEST(SlotTimes, EqualsTheLinearScanOnRandomBookings) {
    std::mt19937_64 rng(7);
    for (size_t slots : {1u, 4u, 64u, 512u}) {
        SlotTimes s;
        s.assign(slots, 0);
        std::vector<double> scan(slots, 0);
        std::uniform_real_distribution<double> ahead(0, 50);
        for (int i = 0; i < 20000; ++i) {
            auto slot = std::min_element(scan.begin(), scan.end());
            ASSERT_EQ(s.earliest(), *slot) << slots << " slots, booking " << i;
            double until = *slot + ahead(rng);
            *slot = until;
            s.book_earliest(until);
        }
    }
}
