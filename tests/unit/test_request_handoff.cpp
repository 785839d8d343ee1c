// The DMA request socket's hand-off (models/dma/request_handoff.h): first come first served, the
// socket handed to the head of the queue at END_REQ, free again only when nobody waits.
#include "models/dma/request_handoff.h"

#include <gtest/gtest.h>
#include <vector>

using nctlm::RequestHandoff;

TEST(RequestHandoff, FreeSocketIsTakenAtOnceFromItsFreeTime) {
    RequestHandoff h;
    auto g = h.acquire(3, 10.0);
    EXPECT_TRUE(g.now);
    EXPECT_EQ(g.from_ns, 10.0);
    EXPECT_EQ(h.release(25.0), -1);  // nobody waits: free from 25 ns
    g = h.acquire(1, 20.0);          // asks before that: owns it, usable at END_REQ (25 ns)
    EXPECT_TRUE(g.now);
    EXPECT_EQ(g.from_ns, 25.0);
    EXPECT_EQ(h.owner(), 1);
}

TEST(RequestHandoff, WaitersAreServedInArrivalOrderNotChannelOrder) {
    RequestHandoff h;
    ASSERT_TRUE(h.acquire(5, 0).now);
    for (int c : {7, 2, 9, 0})
        EXPECT_FALSE(h.acquire(c, 1).now);
    EXPECT_EQ(h.waiting(), 4u);
    std::vector<int> order;
    for (int i = 0; i < 4; ++i)
        order.push_back(h.release(2.0 + i));
    EXPECT_EQ(order, (std::vector<int>{7, 2, 9, 0}));
    EXPECT_EQ(h.release(10), -1);
    EXPECT_EQ(h.owner(), -1);
}

TEST(RequestHandoff, ARequeuingOwnerGoesBehindTheOthers) {
    // A channel that wants the socket again queues behind those already waiting: channels with
    // work take turns (round robin in the order they first asked).
    RequestHandoff h;
    ASSERT_TRUE(h.acquire(0, 0).now);
    EXPECT_FALSE(h.acquire(1, 0).now);
    EXPECT_FALSE(h.acquire(0, 0).now);  // the owner asks for its next descriptor
    EXPECT_EQ(h.release(1), 1);
    EXPECT_EQ(h.release(2), 0);
    EXPECT_EQ(h.release(3), -1);
}

TEST(RequestHandoff, NobodyTakesTheSocketWhileOthersWait) {
    // Even if the socket's free time has passed, a newcomer queues while the queue is not empty.
    RequestHandoff h;
    ASSERT_TRUE(h.acquire(0, 0).now);
    EXPECT_FALSE(h.acquire(1, 0).now);
    EXPECT_EQ(h.release(5), 1);       // 1 owns it from 5 ns
    EXPECT_FALSE(h.acquire(2, 100).now);
    EXPECT_EQ(h.release(101), 2);
}
