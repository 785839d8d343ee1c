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
        double latency = 100 + double(rng() % 2000), bw = 50 + double(rng() % 500);
        EXPECT_EQ(choose_algorithm(s, 1024, latency, bw), "tree");
        EXPECT_EQ(choose_algorithm(s, uint64_t(1) << 34, latency, bw), "ring");
        int flips = 0;
        std::string last = "tree";
        for (uint64_t b = 1024; b < (uint64_t(1) << 34); b *= 2) {
            std::string a = choose_algorithm(s, b, latency, bw);
            flips += a != last;
            last = a;
        }
        EXPECT_EQ(flips, 1);
    }
    s.ranks = 6;
    EXPECT_EQ(choose_algorithm(s, 1024, 600, 368), "ring");
    EXPECT_NEAR(bus_factor(Collective::AllReduce, 8), 1.75, 1e-12);
    EXPECT_NEAR(bus_factor(Collective::AllGather, 4), 0.75, 1e-12);
}
