// flow::ChipRoutes: the resources of a flow between a tile and a stack of any chip.
#include "models/flow/chip_routes.h"

#include <gtest/gtest.h>
#include <random>

using namespace nctlm;

// On its own chip: the NoC's routes, offset by the chip's links; no NeuronLink.
TEST(ChipRoutes, OnItsOwnChipIsTheNocRouteOffsetByTheChip) {
    Topology noc(8, 4, 4);
    ChipTopology wiring(16, ChipTopologyKind::Torus, 4);
    flow::ChipRoutes routes(noc, 8, 4, &wiring);
    const uint32_t links = uint32_t(noc.links());
    for (uint32_t chip : {0u, 5u})
        for (uint32_t t = 0; t < 8; ++t)
            for (uint32_t s = 0; s < 4; ++s) {
                flow::ChipRoute r = routes.route(chip, t, chip, s);
                ASSERT_EQ(r.there_noc.size(), noc.request_route(t, s).size());
                for (size_t k = 0; k < r.there_noc.size(); ++k)
                    EXPECT_EQ(r.there_noc[k], chip * links + noc.request_route(t, s)[k]);
                ASSERT_EQ(r.back_noc.size(), noc.response_route(s, t).size());
                for (size_t k = 0; k < r.back_noc.size(); ++k)
                    EXPECT_EQ(r.back_noc[k], chip * links + noc.response_route(s, t)[k]);
                EXPECT_TRUE(r.there_link.empty());
                EXPECT_TRUE(r.back_link.empty());
                EXPECT_EQ(r.chips, std::vector<uint32_t>{chip});
            }
}

// Another chip, on random torus and ring shapes: one direction per hop each way, the way back on
// each cable's other direction, every chip passed crossed once, and the NoC stretches joined end to
// end (the far chip's last stretch reaches the stack).
TEST(ChipRoutes, AcrossChipsFollowsTheHopsBothWays) {
    std::mt19937 rng(7);
    for (int trial = 0; trial < 200; ++trial) {
        const bool torus = rng() % 2;
        const uint32_t width = 1 + rng() % 4, chips = torus ? width * (1 + rng() % 4) : 2 + rng() % 8;
        ChipTopology wiring(chips, torus ? ChipTopologyKind::Torus : ChipTopologyKind::Ring, width);
        const uint32_t tiles = 1 + rng() % 8, stacks = 1 + rng() % 4;
        Topology noc(tiles, stacks, wiring.ports());
        flow::ChipRoutes routes(noc, tiles, stacks, &wiring);
        const uint32_t from = rng() % chips, to = rng() % chips, tile = rng() % tiles, stack = rng() % stacks;
        flow::ChipRoute r = routes.route(from, tile, to, stack);
        const auto hops = wiring.route(from, to);
        ASSERT_EQ(r.there_link.size(), hops.size());
        ASSERT_EQ(r.back_link.size(), hops.size());
        ASSERT_EQ(r.chips.size(), hops.size() + 1);
        EXPECT_EQ(r.chips.front(), from);
        EXPECT_EQ(r.chips.back(), to);
        const uint32_t ports = wiring.ports(), links = uint32_t(noc.links());
        for (size_t k = 0; k < hops.size(); ++k) {
            EXPECT_EQ(r.there_link[k], hops[k].chip * ports + hops[k].port);
            const uint32_t next = wiring.neighbor(hops[k].chip, hops[k].port);
            EXPECT_EQ(r.back_link[k], next * ports + wiring.arrival_port(hops[k].port));
            EXPECT_EQ(r.chips[k + 1], next);
        }
        // The last NoC link there enters the stack on the far chip (or the port, never elsewhere).
        const uint32_t last = r.there_noc.back();
        EXPECT_EQ(last / links, to);
        EXPECT_EQ(noc.kind(last % links), LinkKind::RouterToStack);
        // Back (listed chip by chip in the order there): the response reaches the tile on its chip.
        uint32_t to_tile = 0;
        for (uint32_t l : r.back_noc)
            to_tile += noc.kind(l % links) == LinkKind::RouterToTile && l / links == from;
        EXPECT_EQ(to_tile, 1u);
        EXPECT_EQ(r.back_noc.size(), r.there_noc.size());
    }
}

TEST(ChipRoutes, AnotherChipWithoutWiringIsRefused) {
    Topology noc(2, 2);
    flow::ChipRoutes routes(noc, 2, 2, nullptr);
    EXPECT_THROW(routes.route(0, 0, 1, 0), std::invalid_argument);
}
