// The collectives' kernel programs (models/graph/collectives.h) without a kernel: every rank's
// bytes moved, the peers it pulls from, the barriers it meets, on random sizes and group sizes.
#include "models/common/config.h"
#include "models/graph/collectives.h"
#include "models/graph/graph.h"
#include "models/kernel/kernel_lowering.h"
#include "tests/support.h"
#include "tests/xorshift.h"

#include <gtest/gtest.h>
#include <map>

using namespace nctlm;
using namespace nctlm::graph;

namespace {

PeConfig pe() { return ConfigTree::from_file(test::platform("trn2")).load<PeConfig>("pe"); }

struct RankTraffic {
    uint64_t in = 0, out = 0, barriers = 0;
    std::map<std::pair<std::string, uint32_t>, uint64_t> read_from;  // (tensor, owner instance) -> bytes read
};

// Walks every instance of the program; tensor t of instance i lives at (t + 1) << 40 | i << 32,
// so each access says whose copy it reads.
std::vector<RankTraffic> walk(const CollectiveSpec& s) {
    kernel::KernelProgram p = kernel::KernelProgram::from_json(collective_program(s), "collective");
    kernel::Layout l = kernel::make_layout(p, pe(), s.ranks);
    EXPECT_EQ(l.grid, s.ranks);
    for (size_t t = 0; t < l.tensors.size(); ++t)
        for (uint32_t i = 0; i < s.ranks; ++i)
            l.tensors[t].base.push_back(((t + 1) << 40) | (uint64_t(i) << 32));
    std::vector<RankTraffic> out(s.ranks);
    for (uint32_t i = 0; i < s.ranks; ++i) {
        kernel::KernelCounts c = kernel::check_kernel(p, l, i, pe(), {});
        out[i].in = c.dma_bytes_in;
        out[i].out = c.dma_bytes_out;
        out[i].barriers = c.grid_barriers;
        kernel::Walker w(p, l, i);
        kernel::Step st;
        while (w.next(st))
            if (st.has_hbm && !st.hbm_write)
                out[i].read_from[{p.tensors[size_t(st.hbm.tensor)].name, uint32_t((st.hbm.address >> 32) & 0xff)}] +=
                    st.hbm.bytes();
    }
    return out;
}

} // namespace

TEST(Collectives, RingAllReduceMovesTwoNMinusOneChunksAndPullsFromThePreviousRank) {
    test::XorShift64 rng{77};
    for (int trial = 0; trial < 12; ++trial) {
        CollectiveSpec s;
        s.kind = Collective::AllReduce;
        s.algorithm = "ring";
        s.ranks = 2 + uint32_t(rng() % 7);
        s.inner = 1 + rng() % 20000;  // elements per chunk
        const uint64_t chunk = s.inner * 2, n = s.ranks;
        auto t = walk(s);
        for (uint32_t r = 0; r < s.ranks; ++r) {
            // Reduce-scatter: pull + own chunk in, the sum out; all-gather: pull in, store out.
            EXPECT_EQ(t[r].in, 3 * (n - 1) * chunk) << "rank " << r << " of " << n;
            EXPECT_EQ(t[r].out, 2 * (n - 1) * chunk);
            EXPECT_EQ(t[r].barriers, 2 * (n - 1) + 1);
            uint32_t prev = uint32_t((r + n - 1) % n);
            uint64_t from_prev = 0, from_others = 0;
            for (auto& [key, bytes] : t[r].read_from) {
                if (key.second == prev && prev != r)
                    from_prev += bytes;
                else if (key.second != r)
                    from_others += bytes;
            }
            EXPECT_EQ(from_prev, 2 * (n - 1) * chunk) << "every peer read is of the previous rank's copy";
            EXPECT_EQ(from_others, 0u);
        }
    }
}

TEST(Collectives, TreeAllReduceAndRingAllGatherAndReduceScatterBytes) {
    test::XorShift64 rng{99};
    for (int trial = 0; trial < 8; ++trial) {
        uint32_t n = 1u << (1 + rng() % 3);
        uint64_t inner = 1 + rng() % 5000;
        CollectiveSpec s;
        s.ranks = n;
        s.inner = inner;
        const uint64_t all = inner * n * 2;
        // Tree all-reduce: n - 1 pairwise reductions (2 in, 1 out) and n - 1 copies down (1 in, 1 out).
        s.kind = Collective::AllReduce;
        s.algorithm = "tree";
        auto t = walk(s);
        uint64_t in = 0, out = 0;
        for (auto& r : t) {
            in += r.in;
            out += r.out;
            EXPECT_EQ(r.barriers, t[0].barriers);
        }
        EXPECT_EQ(in, (n - 1) * 3 * all);
        EXPECT_EQ(out, (n - 1) * 2 * all);
        // The root adds its own x at the first level, its own partial sum at the others.
        uint32_t levels = 0;
        while ((1u << levels) < n)
            ++levels;
        EXPECT_EQ((t[0].read_from[{"x", 0}]), all);
        EXPECT_EQ((t[0].read_from[{"y", 0}]), (levels - 1) * all);
        // All-gather (ring and tree): each rank ends with every shard: its own plus n - 1 pulled.
        for (const char* alg : {"ring", "tree"}) {
            s.kind = Collective::AllGather;
            s.algorithm = alg;
            s.outer = 1 + rng() % 4;
            t = walk(s);
            for (auto& r : t) {
                EXPECT_EQ(r.in, s.outer * inner * 2 * n) << alg;
                EXPECT_EQ(r.out, s.outer * inner * 2 * n) << alg;
            }
        }
        // Reduce-scatter: n - 1 steps of a chunk pulled and one own.
        s.kind = Collective::ReduceScatter;
        s.algorithm = "ring";
        t = walk(s);
        for (auto& r : t) {
            EXPECT_EQ(r.in, 2 * (n - 1) * s.outer * inner * 2);
            EXPECT_EQ(r.out, (n - 1) * s.outer * inner * 2);
        }
    }
}

TEST(Collectives, SendRecvOnlyTheReceiversMoveData) {
    CollectiveSpec s;
    s.kind = Collective::SendRecv;
    s.ranks = 4;
    s.inner = 3000;
    s.pairs = {{0, 1}, {2, 3}};
    auto t = walk(s);
    EXPECT_EQ(t[0].in, 0u);
    EXPECT_EQ(t[2].out, 0u);
    EXPECT_EQ(t[1].in, 6000u);
    EXPECT_EQ((t[1].read_from[{"x", 0}]), 6000u);
    EXPECT_EQ((t[3].read_from[{"x", 2}]), 6000u);
    EXPECT_EQ(t[1].barriers, t[0].barriers);
}

TEST(Collectives, TreeNeedsAPowerOfTwoAndAutoPicksByTheStepCost) {
    CollectiveSpec s;
    s.kind = Collective::AllReduce;
    s.algorithm = "tree";
    s.ranks = 6;
    EXPECT_THROW(collective_program(s), GraphError);
    s.ranks = 8;
    // Latency-bound small messages take the tree, bandwidth-bound large ones the ring; the choice
    // flips once as the size grows, on random latencies and bandwidths.
    test::XorShift64 rng{5};
    for (int trial = 0; trial < 20; ++trial) {
        CollectiveCosts c;
        c.dma_latency_ns = 100 + double(rng() % 2000);
        c.dma_bytes_per_ns = 50 + double(rng() % 500);
        EXPECT_EQ(choose_algorithm(s, 1024, c), "tree");
        EXPECT_EQ(choose_algorithm(s, uint64_t(1) << 34, c), "ring");
        int flips = 0;
        std::string last = "tree";
        for (uint64_t b = 1024; b < (uint64_t(1) << 34); b *= 2) {
            std::string a = choose_algorithm(s, b, c);
            flips += a != last;
            last = a;
        }
        EXPECT_EQ(flips, 1);
    }
    s.ranks = 6;
    CollectiveCosts trn2;
    trn2.dma_latency_ns = 600;
    trn2.dma_bytes_per_ns = 368;
    EXPECT_EQ(choose_algorithm(s, 1024, trn2), "ring");
    EXPECT_NEAR(bus_factor(Collective::AllReduce, 8), 1.75, 1e-12);
    EXPECT_NEAR(bus_factor(Collective::AllGather, 4), 0.75, 1e-12);
}

namespace {
// An 8-rank all-reduce and trn2's DMA (600 ns start latency, 368 GB/s per core).
CollectiveSpec all_reduce_of_8() {
    CollectiveSpec s;
    s.kind = Collective::AllReduce;
    s.ranks = 8;
    return s;
}
CollectiveCosts trn2_dma() {
    CollectiveCosts c;
    c.dma_latency_ns = 600;
    c.dma_bytes_per_ns = 368;
    return c;
}
} // namespace

// The rule's cost over one chip, by hand: ring 2 (N - 1) steps of S/N (reduce-scatter steps three
// transfers, all-gather steps two), tree log2 N reduce levels (three) and log2 N broadcast levels
// (two) of S, each step two DMA start latencies.
TEST(Collectives, AutoCostOnOneChipIsTheDmaStepCost) {
    const CollectiveSpec s = all_reduce_of_8();
    const CollectiveCosts c = trn2_dma();
    const double S = 256 * 1024;
    EXPECT_NEAR(collective_cost(s, "ring", uint64_t(S), c), 14 * 1200 + (7 * 3 + 7 * 2) * S / 8 / 368, 1e-6);
    EXPECT_NEAR(collective_cost(s, "tree", uint64_t(S), c), 6 * 1200 + (3 * 3 + 3 * 2) * S / 368, 1e-6);
}

// Over chips a pull pays its route's latency and shares the wires it crosses. Ranks 0-3 on chip 0,
// 4-7 on chip 1: every ring step has two pulls crossing (one each way), 14 steps; the tree crosses
// at its widest level only (0 <- 4 reducing, 4 <- 0 broadcasting), 2 steps. So a link slow in
// latency makes the tree win a size the ring wins on one chip, and a step's pulls sharing one wire
// take its wire time once each.
TEST(Collectives, AutoWeighsTheLinkOfThePathItTakes) {
    const CollectiveSpec s = all_reduce_of_8();
    const CollectiveCosts one_chip = trn2_dma();
    auto over_two_chips = [&](double latency_ns, double bytes_per_ns) {
        CollectiveCosts t = one_chip;
        t.path.assign(8, std::vector<CollectivePath>(8));
        for (uint32_t d = 0; d < 8; ++d)
            for (uint32_t r = 0; r < 8; ++r)
                if (d / 4 != r / 4)
                    t.path[d][r] = {latency_ns, bytes_per_ns, {d / 4}};  // one wire per direction
        return t;
    };
    const uint64_t big = 1024 * 1024;
    EXPECT_EQ(choose_algorithm(s, big, one_chip), "ring");
    const CollectiveCosts slow_hop = over_two_chips(50000, 1000);
    EXPECT_EQ(choose_algorithm(s, big, slow_hop), "tree") << "50 us per crossing: the tree crosses twice, the ring 14 times";
    EXPECT_NEAR(collective_cost(s, "ring", big, slow_hop) - collective_cost(s, "ring", big, one_chip), 14 * 50000, 1e-6);
    EXPECT_NEAR(collective_cost(s, "tree", big, slow_hop) - collective_cost(s, "tree", big, one_chip), 2 * 50000, 1e-6);
    // Sharing: two pulls over one wire take twice the wire time of one.
    const CollectiveCosts shared = over_two_chips(0, 1);
    CollectiveSpec pairs;
    pairs.kind = Collective::SendRecv;
    pairs.ranks = 8;
    pairs.pairs = {{4, 0}};
    const double one = collective_cost(pairs, "ring", 1000, shared);
    pairs.pairs = {{4, 0}, {5, 1}};
    EXPECT_NEAR(collective_cost(pairs, "ring", 1000, shared) - one, 1000, 1e-6);
}
