// LevelSweep (the LT paths' queue statistics) against the level computed directly from the
// intervals: at every change, the level it reports is the number of entries whose interval
// contains that time.
#include "models/common/level_sweep.h"

#include <algorithm>
#include <gtest/gtest.h>
#include <limits>
#include <random>
#include <vector>

using nctlm::LevelSweep;

namespace {
struct Interval {
    double from, to;
    size_t n;
};
// Entries held at t: intervals with from <= t < to (a departure at t comes first).
size_t level_at(const std::vector<Interval>& held, double t) {
    size_t n = 0;
    for (const Interval& i : held)
        if (i.from <= t && t < i.to)
            n += i.n;
    return n;
}
} // namespace

TEST(LevelSweep, DeparturesBeforeArrivalsAtTheSameTime) {
    std::vector<std::pair<size_t, double>> seen;
    LevelSweep s([&](size_t n, double t) { seen.push_back({n, t}); });
    s.hold(0, 10);
    s.hold(10, 20);  // takes the place of the first at t = 10: the level never reads 2
    s.advance(std::numeric_limits<double>::infinity());
    std::vector<std::pair<size_t, double>> expected{{1, 0}, {0, 10}, {1, 10}, {0, 20}};
    EXPECT_EQ(seen, expected);
}

TEST(LevelSweep, AdvanceReportsTheLevelAndOnlyChangesUpToIt) {
    LevelSweep s;
    s.hold(5, 15, 3);
    s.hold(7, 9);
    EXPECT_EQ(s.advance(4), 0u);
    EXPECT_EQ(s.advance(8), 4u);
    EXPECT_EQ(s.advance(9), 3u);
    EXPECT_EQ(s.advance(100), 0u);
    s.hold(100, 100);  // empty: nothing
    EXPECT_EQ(s.advance(200), 0u);
}

TEST(LevelSweep, EqualsTheDirectCountOnRandomBookingsInArrivalOrder) {
    std::mt19937_64 rng(11);
    std::uniform_real_distribution<double> gap(0, 4), length(0, 30);
    std::uniform_int_distribution<size_t> entries(1, 64);
    for (int run = 0; run < 20; ++run) {
        std::vector<Interval> held;
        size_t last_level = 0;
        double last_t = -1;
        bool ordered = true;
        LevelSweep s([&](size_t n, double t) {
            ordered = ordered && t >= last_t;
            last_t = t;
            last_level = n;
        });
        double t = 0;
        for (int i = 0; i < 2000; ++i) {
            t += gap(rng);
            size_t level = s.advance(t);
            ASSERT_EQ(level, level_at(held, t)) << "run " << run << ", arrival " << i << " at " << t;
            // An entry waits a while before it holds (from >= t), as a request waits for a credit.
            Interval iv{t + (i % 3 == 0 ? length(rng) / 4 : 0), 0, entries(rng)};
            iv.to = iv.from + length(rng);
            held.push_back(iv);
            s.hold(iv.from, iv.to, iv.n);
        }
        s.advance(std::numeric_limits<double>::infinity());
        EXPECT_TRUE(ordered);
        EXPECT_EQ(last_level, 0u);
    }
}
