#include "models/hbm/address_map.h"
#include "models/noc/topology.h"

#include <gtest/gtest.h>
#include <set>

using namespace nctlm;

namespace {
HbmConfig two_stacks() {
    HbmConfig c;
    c.stacks = 2;
    c.stack_capacity = 16ull << 30;
    c.pseudo_channels = 16;
    c.interleave = 2048;
    c.stack_interleave = 4096;
    c.interleaved_base = 1ull << 40;
    return c;
}
} // namespace

TEST(AddressMap, ContiguousWindowOwnsStacksInOrder) {
    AddressMap m(two_stacks());
    EXPECT_EQ(m.map(0)->stack, 0u);
    EXPECT_EQ(m.map((16ull << 30) - 1)->stack, 0u);
    EXPECT_EQ(m.map(16ull << 30)->stack, 1u);
    EXPECT_EQ(m.map(16ull << 30)->offset, 0u);
}

TEST(AddressMap, PseudoChannelsRotateEveryInterleaveChunk) {
    AddressMap m(two_stacks());
    std::set<uint32_t> pcs;
    for (uint64_t a = 0; a < 32768; a += 2048)
        pcs.insert(m.map(a)->pseudo_channel);
    EXPECT_EQ(pcs.size(), 16u) << "a 32 KiB read must cover all 16 PCs";
    EXPECT_EQ(m.map(2047)->pseudo_channel, 0u);
    EXPECT_EQ(m.map(2048)->pseudo_channel, 1u);
    EXPECT_EQ(m.map(32768)->pseudo_channel, 0u);
}

TEST(AddressMap, InterleavedWindowAliasesTheSameMemoryAcrossStacks) {
    AddressMap m(two_stacks());
    uint64_t base = 1ull << 40;
    EXPECT_EQ(m.map(base)->stack, 0u);
    EXPECT_EQ(m.map(base + 4096)->stack, 1u);
    EXPECT_EQ(m.map(base + 8192)->stack, 0u);
    EXPECT_EQ(m.map(base + 8192)->offset, 4096u);
    EXPECT_EQ(m.map(base + 4096 + 100)->offset, 100u);
}

TEST(AddressMap, OutOfMapAddressesHaveNoLocation) {
    AddressMap m(two_stacks());
    EXPECT_FALSE(m.map(32ull << 30).has_value());
    EXPECT_FALSE(m.map((1ull << 40) + (32ull << 30)).has_value());
    EXPECT_FALSE(m.map(~0ull).has_value());
}

TEST(Topology, LocalRouteIsTwoLinksRemoteCrossesTheRing) {
    Topology t(2, 2);
    EXPECT_EQ(t.router_of_tile(0), 0u);
    EXPECT_EQ(t.router_of_tile(1), 1u);
    EXPECT_EQ(t.request_route(0, 0).size(), 2u);
    EXPECT_EQ(t.request_route(0, 1).size(), 3u);
    EXPECT_EQ(t.response_route(1, 0).size(), 3u);
    EXPECT_EQ(t.ring_hops(0, 1), 1u);
}

TEST(Topology, EightTilesFourStacksShareRouters) {
    Topology t(8, 4);
    EXPECT_EQ(t.router_of_tile(0), 0u);
    EXPECT_EQ(t.router_of_tile(1), 0u);
    EXPECT_EQ(t.router_of_tile(7), 3u);
    EXPECT_EQ(t.ring_hops(0, 2), 2u);
    EXPECT_EQ(t.ring_hops(0, 3), 1u);  // shortest way round
    // Two tiles on one router share its router->stack link but have their own tile links.
    EXPECT_EQ(t.request_route(0, 0).back(), t.request_route(1, 0).back());
    EXPECT_NE(t.request_route(0, 0).front(), t.request_route(1, 0).front());
}

#include "models/common/bandwidth_pipe.h"

TEST(LinkSchedule, LaterBookingFillsAnIdleGapBeforeAnEarlierOne) {
    LinkSchedule link(Bandwidth{1e9});  // 1 B/ns
    EXPECT_DOUBLE_EQ(link.reserve(100, 10, 0).start_ns, 100);  // [100, 110)
    Occupancy early = link.reserve(20, 30, 0);                  // fits before: [20, 50)
    EXPECT_DOUBLE_EQ(early.start_ns, 20);
    Occupancy squeezed = link.reserve(40, 30, 0);  // [50, 80): after the gap's first user
    EXPECT_DOUBLE_EQ(squeezed.start_ns, 50);
    Occupancy too_long = link.reserve(60, 40, 0);  // no 40 ns gap before 110: goes after
    EXPECT_DOUBLE_EQ(too_long.start_ns, 110);
    EXPECT_DOUBLE_EQ(link.busy_ns(), 110);
}

TEST(LinkSchedule, BackToBackBookingsBehaveLikeAFifoPipe) {
    LinkSchedule link(Bandwidth{2e9});
    BandwidthPipe fifo(Bandwidth{2e9});
    for (int i = 0; i < 50; ++i) {
        double ready = i * 3.0;
        EXPECT_DOUBLE_EQ(link.reserve(ready, 8, ready).end_ns, fifo.reserve(ready, 8).end_ns) << i;
    }
}

// pc_of takes shifts and masks when the PCs and the interleave are powers of two: the same PC as
// the digit sum (fold) or the chunk index (none) in base `pseudo_channels`, at random offsets and
// on sizes that are and are not powers of two.
TEST(AddressMap, PseudoChannelOfEveryOffsetIsTheDigitSumOfItsChunk) {
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (uint32_t pcs : {2u, 3u, 8u, 12u, 16u, 32u})
        for (uint64_t interleave : {256ull, 2048ull, 3072ull})
            for (PcHash hash : {PcHash::Fold, PcHash::None}) {
                HbmConfig c = two_stacks();
                c.pseudo_channels = pcs;
                c.interleave = interleave;
                c.pc_hash = hash;
                AddressMap m(c);
                for (int i = 0; i < 2000; ++i) {
                    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                    const uint64_t offset = x % c.stack_capacity;
                    uint64_t chunk = offset / interleave, sum = 0;
                    for (uint64_t k = chunk; k; k /= pcs)
                        sum += k % pcs;
                    const uint64_t want = hash == PcHash::Fold ? sum % pcs : chunk % pcs;
                    ASSERT_EQ(m.pc_of(offset), want) << pcs << " PCs, interleave " << interleave << ", offset " << offset;
                }
            }
}
