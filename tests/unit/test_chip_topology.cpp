// Multi-chip logic without a kernel: the address map's chip field, NeuronLink's topology (ports,
// neighbours, dimension-ordered routes and their dateline virtual channels, ring orders) and the
// link's timing class.
#include "models/hbm/address_map.h"
#include "models/link/chip_topology.h"
#include "models/link/link_timing.h"
#include "tests/xorshift.h"

#include <functional>
#include <gtest/gtest.h>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>

using namespace nctlm;

namespace {
HbmConfig trn2_hbm() {
    HbmConfig c;
    c.stacks = 4;
    c.stack_capacity = 24ull << 30;
    c.pseudo_channels = 32;
    c.interleave = 2048;
    c.stack_interleave = 4096;
    c.interleaved_base = 1ull << 40;
    return c;
}
} // namespace

TEST(AddressMapChips, ChipIndexSitsAboveEveryLocalWindow) {
    AddressMap m(trn2_hbm(), 16, 44);
    for (uint32_t chip : {0u, 1u, 7u, 15u}) {
        uint64_t base = uint64_t(chip) << 44;
        EXPECT_EQ(m.chip_base(chip), base);
        auto a = m.map(base + (24ull << 30) * 2 + 4096);  // stack 2 of that chip
        ASSERT_TRUE(a);
        EXPECT_EQ(a->chip, chip);
        EXPECT_EQ(a->stack, 2u);
        EXPECT_EQ(a->offset, 4096u);
        auto b = m.map(m.interleaved_base(chip) + 4096);  // the interleaved window of that chip
        ASSERT_TRUE(b);
        EXPECT_EQ(b->chip, chip);
        EXPECT_EQ(b->stack, 1u);
        EXPECT_EQ(m.stack_base(chip, 3), base + 3 * (24ull << 30));
    }
    EXPECT_FALSE(m.map(uint64_t(16) << 44));           // no chip 16
    EXPECT_FALSE(m.map((uint64_t(3) << 44) + (96ull << 30)));  // a hole of chip 3
}

TEST(AddressMapChips, OneChipIsTheLocalMapUnchanged) {
    AddressMap one(trn2_hbm()), many(trn2_hbm(), 4, 44);
    test::XorShift64 rng{7};
    for (int i = 0; i < 1000; ++i) {
        uint64_t a = rng() % (2ull << 40);
        auto x = one.map(a), y = many.map(a);
        ASSERT_EQ(bool(x), bool(y)) << a;
        if (x) {
            EXPECT_EQ(x->chip, 0u);
            EXPECT_EQ(x->stack, y->stack);
            EXPECT_EQ(x->pseudo_channel, y->pseudo_channel);
            EXPECT_EQ(x->offset, y->offset);
        }
    }
    EXPECT_FALSE(one.map(uint64_t(1) << 44));  // another chip's address on a one-chip platform
}

TEST(AddressMapChips, WindowsPastTheChipBitAreRefused) {
    EXPECT_THROW(AddressMap(trn2_hbm(), 2, 40), std::invalid_argument);  // the 1 TiB window reaches past 2^40
    EXPECT_THROW(AddressMap(trn2_hbm(), 1u << 20, 44), std::invalid_argument);
    EXPECT_NO_THROW(AddressMap(trn2_hbm(), 16, 41));
}

TEST(ChipTopology, TorusNeighboursWrapAndPortsPair) {
    ChipTopology t(16, ChipTopologyKind::Torus, 4);
    EXPECT_EQ(t.ports(), 4u);
    EXPECT_EQ(t.neighbor(0, 0), 1u);   // x+
    EXPECT_EQ(t.neighbor(0, 1), 3u);   // x- wraps
    EXPECT_EQ(t.neighbor(0, 2), 4u);   // y+
    EXPECT_EQ(t.neighbor(0, 3), 12u);  // y- wraps
    EXPECT_EQ(t.neighbor(15, 0), 12u);
    for (uint32_t c = 0; c < 16; ++c)
        for (uint32_t p = 0; p < 4; ++p)
            EXPECT_EQ(t.neighbor(t.neighbor(c, p), t.arrival_port(p)), c) << c << " " << p;
}

TEST(ChipTopology, RoutesAreMinimalDimensionOrderedAndArrive) {
    for (auto [chips, width] : {std::pair{16u, 4u}, {8u, 4u}, {12u, 3u}, {6u, 2u}, {4u, 1u}, {9u, 9u}}) {
        ChipTopology t(chips, ChipTopologyKind::Torus, width);
        for (uint32_t a = 0; a < chips; ++a)
            for (uint32_t b = 0; b < chips; ++b) {
                auto r = t.route(a, b);
                uint32_t at = a;
                bool in_y = false;
                for (auto& h : r) {
                    EXPECT_EQ(h.chip, at);
                    in_y = in_y || h.port >= 2;
                    EXPECT_FALSE(in_y && h.port < 2) << "x after y";
                    at = t.neighbor(at, h.port);
                }
                EXPECT_EQ(at, b);
                uint32_t W = t.width(), H = t.height();
                uint32_t dx = (b % W + W - a % W) % W, dy = (b / W + H - a / W) % H;
                EXPECT_EQ(r.size(), std::min(dx, W - dx) + std::min(dy, H - dy)) << a << "->" << b;
            }
    }
}

// The dateline rule: inside a dimension a route's channel is 0 until the hop that crosses from
// coordinate k-1 to 0 (or 0 to k-1), and 1 from there to the dimension's end; so over all routes
// the channel dependency graph (a hop's channel waits for the next hop's) has no cycle.
TEST(ChipTopology, VirtualChannelDependenciesHaveNoCycle) {
    for (auto [chips, width, kind] : {std::tuple{16u, 4u, ChipTopologyKind::Torus}, {8u, 8u, ChipTopologyKind::Ring},
                                      {5u, 5u, ChipTopologyKind::Ring}, {12u, 4u, ChipTopologyKind::Torus}}) {
        ChipTopology t(chips, kind, width);
        using Channel = std::tuple<uint32_t, uint32_t, uint32_t>;  // chip, port, vc
        std::map<Channel, std::set<Channel>> next;
        for (uint32_t a = 0; a < chips; ++a)
            for (uint32_t b = 0; b < chips; ++b) {
                auto r = t.route(a, b);
                for (size_t i = 0; i + 1 < r.size(); ++i)
                    next[{r[i].chip, r[i].port, r[i].vc}].insert({r[i + 1].chip, r[i + 1].port, r[i + 1].vc});
            }
        // Depth-first search for a back edge.
        std::map<Channel, int> state;  // 1: on the stack, 2: done
        std::function<bool(const Channel&)> cyclic = [&](const Channel& c) {
            state[c] = 1;
            for (auto& n : next[c]) {
                if (state[n] == 1 || (state[n] == 0 && cyclic(n)))
                    return true;
            }
            state[c] = 2;
            return false;
        };
        for (auto& [c, _] : next) {
            if (state[c] == 0) {
                EXPECT_FALSE(cyclic(c)) << chips << " chips";
            }
        }
    }
}

TEST(ChipTopology, RingOrdersJoinNeighboursOnTheShippedTorus) {
    ChipTopology t(16, ChipTopologyKind::Torus, 4);
    for (uint32_t n : {2u, 4u, 8u, 16u}) {
        auto order = t.ring_order(n);
        ASSERT_EQ(order.size(), n);
        EXPECT_EQ(std::set<uint32_t>(order.begin(), order.end()).size(), n);
        EXPECT_EQ(order[0], 0u);
        for (uint32_t i = 0; i < n; ++i)
            EXPECT_EQ(t.hops(order[i], order[(i + 1) % n]), 1u) << n << " ranks, step " << i;
    }
    EXPECT_THROW(t.ring_order(17), std::invalid_argument);
    EXPECT_THROW(ChipTopology(6, ChipTopologyKind::Torus, 4), std::invalid_argument);
}

TEST(LinkTiming, SerializesCutThroughAndKeepsCreditsPerChannel) {
    LinkConfig c;
    c.wire_bandwidth = Bandwidth{100e9};  // 100 B/ns
    c.latency = Duration(200);
    c.credits = 2;
    LinkTiming l(c, 2);
    EXPECT_DOUBLE_EQ(l.serialization(2048), 20.48);
    EXPECT_DOUBLE_EQ(l.latency_ns(), 200);
    auto a = l.cross(0, 0, 2048, 0);
    EXPECT_DOUBLE_EQ(a.start_ns, 0);
    EXPECT_DOUBLE_EQ(a.head_ns, 200);
    EXPECT_DOUBLE_EQ(a.tail_ns, 220.48);
    auto b = l.cross(0, 0, 2048, 0);  // the wire is busy: right after
    EXPECT_DOUBLE_EQ(b.start_ns, 20.48);
    auto c2 = l.cross(0, 500, 64, 0);  // data still arriving: the tail waits for it
    EXPECT_DOUBLE_EQ(c2.tail_ns, 700);
    EXPECT_DOUBLE_EQ(l.bytes(), 2048 * 2 + 64);
    // Credits: two per channel; booking both pushes the next to when the first frees.
    EXPECT_EQ(l.credit_free_at(0), 0);
    l.hold_credit(0, 300);
    l.hold_credit(0, 400);
    EXPECT_EQ(l.credit_free_at(0), 300);
    EXPECT_EQ(l.credit_free_at(1), 0);  // the other channel's slots are its own
}
