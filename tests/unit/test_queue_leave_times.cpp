// QueueLeaveTimes (when a request enters its PC queue under LT) against the admission rule of the AT
// controller, PcScheduler::has_room, evaluated directly: at time t the queue holds every earlier
// request whose decision lies after t, and a request of n entries enters at the first t where those
// hold nothing or leave room for n.
#include "models/hbm/queue_leave_times.h"

#include <algorithm>
#include <gtest/gtest.h>
#include <random>
#include <vector>

using nctlm::QueueLeaveTimes;

namespace {
struct Left {
    double t;
    uint32_t entries;
};
double room_by_definition(const std::vector<Left>& earlier, size_t cap, uint32_t n) {
    std::vector<double> candidates{0};
    for (const Left& l : earlier)
        candidates.push_back(l.t);
    std::sort(candidates.begin(), candidates.end());
    for (double t : candidates) {
        uint64_t held = 0;
        for (const Left& l : earlier)
            if (l.t > t)
                held += l.entries;
        if (held == 0 || held + n <= cap)
            return t;
    }
    return candidates.back();
}
} // namespace

TEST(QueueLeaveTimes, MixedSizesWaitForTheirEntries) {
    // A 64-entry queue holding two 32-entry bursts: a 4-entry tail waits for the older one to leave
    // (counting requests of its own size, 16 would fit).
    QueueLeaveTimes q;
    q.reset(64);
    q.push(100, 32);
    q.push(200, 32);
    EXPECT_EQ(q.room(4), 100);
    EXPECT_EQ(q.room(32), 100);
    q.push(210, 4);
    EXPECT_EQ(q.room(4), 100);    // 32 + 4 + 4 <= 64 once the first left
    EXPECT_EQ(q.room(40), 200);   // 4 + 40 <= 64 once both bursts left
    EXPECT_EQ(q.room(100), 210);  // larger than the queue: alone, once it is empty
}

TEST(QueueLeaveTimes, EqualsAdmissionRuleOnRandomSequences) {
    std::mt19937_64 rng(24);
    for (int trial = 0; trial < 300; ++trial) {
        const size_t cap = std::uniform_int_distribution<size_t>(0, 80)(rng);
        const bool uniform = trial % 3 == 0;
        const uint32_t one = std::uniform_int_distribution<uint32_t>(1, 40)(rng);
        QueueLeaveTimes q;
        q.reset(cap);
        std::vector<Left> earlier;
        double t = 0;
        for (int i = 0; i < 60; ++i) {
            const uint32_t n = uniform ? one : std::uniform_int_distribution<uint32_t>(1, 40)(rng);
            const double want = room_by_definition(earlier, cap, n);
            ASSERT_EQ(q.room(n), want) << "trial " << trial << " request " << i << " cap " << cap << " n " << n;
            t = std::max(t, want) + std::uniform_int_distribution<int>(0, 20)(rng);  // decisions in order
            q.push(t, n);
            earlier.push_back({t, n});
        }
    }
}
