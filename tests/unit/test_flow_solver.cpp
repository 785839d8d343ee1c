// The flow solver (models/flow/flow_solver.h) without a kernel: finish times of textbook cases,
// max-min fairness against a per-flow reference on random instances, and finish times against a
// fluid integration in small steps.
#include "models/flow/flow_solver.h"
#include "tests/xorshift.h"

#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>
#include <map>

using namespace nctlm::flow;

namespace {

std::map<uint64_t, double> run(FlowSolver& s, double until = 1e12) {
    std::map<uint64_t, double> done;
    s.advance(until, [&](uint64_t tag, double t) { done[tag] = t; });
    return done;
}

} // namespace

TEST(FlowSolver, OneFlowTakesBytesOverCapacityAfterItsJoin) {
    FlowSolver s(Sharing::Fair);
    uint32_t r = s.add_resource(10);  // 10 B/ns
    uint32_t c = s.add_class({{r, 1}});
    s.add_flow(c, 1000, 5, 7);
    auto done = run(s);
    ASSERT_EQ(done.size(), 1u);
    EXPECT_DOUBLE_EQ(done[7], 105);
}

TEST(FlowSolverFair, TwoFlowsShareThenTheSurvivorSpeedsUp) {
    FlowSolver s(Sharing::Fair);
    uint32_t r = s.add_resource(10);
    uint32_t c = s.add_class({{r, 1}});
    s.add_flow(c, 100, 0, 1);
    s.add_flow(c, 300, 0, 2);
    auto done = run(s);
    EXPECT_DOUBLE_EQ(done[1], 20);  // 5 B/ns each
    EXPECT_DOUBLE_EQ(done[2], 40);  // 100 moved by 20, the other 200 at 10 B/ns
}

TEST(FlowSolverFair, MaxMinOnTwoLinks) {
    // L1 (1 B/ns) and L2 (2 B/ns); f1 crosses both, f2 only L2, f3 only L1: L1 is the bottleneck of
    // f1 and f3 (0.5 each), f2 takes what L2 has left (1.5).
    FlowSolver s(Sharing::Fair);
    uint32_t l1 = s.add_resource(1), l2 = s.add_resource(2);
    uint32_t c1 = s.add_class({{l1, 1}, {l2, 1}}), c2 = s.add_class({{l2, 1}}), c3 = s.add_class({{l1, 1}});
    s.add_flow(c1, 1e6, 0, 1);
    s.add_flow(c2, 1e6, 0, 2);
    s.add_flow(c3, 1e6, 0, 3);
    s.advance(0, [](uint64_t, double) {});
    EXPECT_DOUBLE_EQ(s.class_rate(c1), 0.5);
    EXPECT_DOUBLE_EQ(s.class_rate(c3), 0.5);
    EXPECT_DOUBLE_EQ(s.class_rate(c2), 1.5);
}

TEST(FlowSolverFair, UsageWeightSplitsAFlowOverResources) {
    // Half of each byte on each of two pseudo-channels of 4 B/ns: the flow moves 8 B/ns; a second
    // flow entirely on the first one leaves it 2 + 2 (max-min with weights 0.5 and 1).
    FlowSolver s(Sharing::Fair);
    uint32_t a = s.add_resource(4), b = s.add_resource(4);
    uint32_t split = s.add_class({{a, 0.5}, {b, 0.5}}), hot = s.add_class({{a, 1}});
    s.add_flow(split, 1e6, 0, 1);
    s.advance(0, [](uint64_t, double) {});
    EXPECT_DOUBLE_EQ(s.class_rate(split), 8);
    s.add_flow(hot, 1e6, 0, 2);
    s.advance(0, [](uint64_t, double) {});
    // Equal rates x on a: 0.5 x + x = 4 -> x = 8/3; b is not full, but split is fixed at a.
    EXPECT_NEAR(s.class_rate(split), 8.0 / 3, 1e-12);
    EXPECT_NEAR(s.class_rate(hot), 8.0 / 3, 1e-12);
}

TEST(FlowSolverFair, RateBoundCapsAFlow) {
    FlowSolver s(Sharing::Fair);
    uint32_t r = s.add_resource(10);
    uint32_t slow = s.add_class({{r, 1}}, 2), fast = s.add_class({{r, 1}});
    s.add_flow(slow, 1e6, 0, 1);
    s.add_flow(fast, 1e6, 0, 2);
    s.advance(0, [](uint64_t, double) {});
    EXPECT_DOUBLE_EQ(s.class_rate(slow), 2);
    EXPECT_DOUBLE_EQ(s.class_rate(fast), 8);
}

TEST(FlowSolver, OutagesStopTheFlowsCrossingThem) {
    // 100 B at 1 B/ns with the resource down during [30, 40), [130, 140), ...: done at 110.
    FlowSolver s(Sharing::Fair);
    uint32_t r = s.add_resource(1);
    uint32_t c = s.add_class({{r, 1}});
    s.add_outage({r}, 30, 100, 10);
    s.add_flow(c, 100, 0, 1);
    auto done = run(s, 1000);
    EXPECT_DOUBLE_EQ(done[1], 110);
}

TEST(FlowSolver, ZeroByteFlowIsDoneAtItsJoin) {
    FlowSolver s(Sharing::Fair);
    uint32_t r = s.add_resource(1);
    uint32_t c = s.add_class({{r, 1}});
    s.add_flow(c, 0, 12, 1);
    auto done = run(s);
    EXPECT_DOUBLE_EQ(done[1], 12);
}

TEST(FlowSolverFair, AdvanceStopsAtTheTimeAskedAndResumes) {
    FlowSolver s(Sharing::Fair);
    uint32_t r = s.add_resource(1);
    uint32_t c = s.add_class({{r, 1}});
    s.add_flow(c, 100, 0, 1);
    EXPECT_TRUE(run(s, 50).empty());
    EXPECT_DOUBLE_EQ(s.now(), 50);
    s.add_flow(c, 10, 50, 2);  // shares from 50: 50 B left for flow 1 at 0.5 B/ns
    auto done = run(s);
    EXPECT_DOUBLE_EQ(done[2], 70);
    EXPECT_DOUBLE_EQ(done[1], 110);  // 10 B more by 70, then 40 B at 1 B/ns
}

// nr resources of random capacity (0.5..10.49) added to the solver; their capacities.
static std::vector<double> add_random_resources(FlowSolver& s, int nr, nctlm::test::XorShift64& rng) {
    std::vector<double> cap;
    for (int r = 0; r < nr; ++r) {
        cap.push_back(0.5 + double(rng() % 1000) / 100);
        s.add_resource(cap.back());
    }
    return cap;
}

// Max-min fairness characterised per flow (Bertsekas & Gallager): every flow crosses a full
// resource on which no other flow has a larger rate (or is at its bound). Random instances, classes
// with several flows: the per-class solution must give every flow such a bottleneck.
TEST(FlowSolverFair, EveryFlowHasABottleneckOnRandomInstances) {
    nctlm::test::XorShift64 rng{24};
    for (int trial = 0; trial < 300; ++trial) {
        FlowSolver s(Sharing::Fair);
        const int nr = 1 + int(rng() % 8), nc = 1 + int(rng() % 8);
        const std::vector<double> cap = add_random_resources(s, nr, rng);
        std::vector<std::vector<Usage>> usage(nc);
        std::vector<double> bound(nc, kNever);
        std::vector<int> flows(nc);
        for (int c = 0; c < nc; ++c) {
            for (int r = 0; r < nr; ++r)
                if (rng() % 3 == 0)
                    usage[c].push_back({uint32_t(r), 0.1 + double(rng() % 100) / 50});
            if (usage[c].empty() || rng() % 5 == 0)
                bound[c] = 0.1 + double(rng() % 100) / 20;
            uint32_t id = s.add_class(usage[c], bound[c]);
            flows[c] = 1 + int(rng() % 4);
            for (int f = 0; f < flows[c]; ++f)
                s.add_flow(id, 1e9, 0, uint64_t(c * 10 + f));
        }
        s.advance(0, [](uint64_t, double) {});
        std::vector<double> rate(nc), load(nr, 0);
        for (int c = 0; c < nc; ++c) {
            rate[c] = s.class_rate(uint32_t(c));
            for (auto& u : usage[c])
                load[u.resource] += flows[c] * u.weight * rate[c];
        }
        for (int r = 0; r < nr; ++r)
            EXPECT_LE(load[r], cap[r] * (1 + 1e-9)) << "trial " << trial << " resource " << r;
        for (int c = 0; c < nc; ++c) {
            bool bottleneck = rate[c] >= bound[c] * (1 - 1e-9);
            for (auto& u : usage[c]) {
                if (load[u.resource] < cap[u.resource] * (1 - 1e-9))
                    continue;
                bool largest = true;
                for (int o = 0; o < nc; ++o)
                    for (auto& v : usage[o])
                        if (v.resource == u.resource && rate[o] > rate[c] * (1 + 1e-9))
                            largest = false;
                bottleneck = bottleneck || largest;
            }
            EXPECT_TRUE(bottleneck) << "trial " << trial << " class " << c << " rate " << rate[c];
        }
    }
}

// Finish times against a fluid integration in steps of 1e-3 ns: flows join at random times.
TEST(FlowSolverFair, FinishTimesMatchAFluidIntegration) {
    nctlm::test::XorShift64 rng{7};
    for (int trial = 0; trial < 10; ++trial) {
        FlowSolver s(Sharing::Fair);
        const int nr = 3;
        std::vector<double> cap = {4, 2, 6};
        for (double c : cap)
            s.add_resource(c);
        std::vector<std::vector<Usage>> usage = {{{0, 1}}, {{0, 0.5}, {1, 0.5}}, {{1, 1}, {2, 1}}, {{2, 0.25}}};
        for (auto& u : usage)
            s.add_class(u);
        struct F {
            int c;
            double join, bytes, left, done = -1;
        };
        std::vector<F> fs;
        for (int f = 0; f < 12; ++f) {
            F x{int(rng() % usage.size()), double(rng() % 50), 20 + double(rng() % 200), 0};
            x.left = x.bytes;
            fs.push_back(x);
            s.add_flow(uint32_t(x.c), x.bytes, x.join, uint64_t(f));
        }
        auto done = run(s);
        // Reference: at each step, max-min per flow with a naive progressive filling.
        const double dt = 1e-3;
        for (double t = 0; t < 2000; t += dt) {
            std::vector<int> act;
            for (size_t f = 0; f < fs.size(); ++f)
                if (fs[f].join <= t + 1e-12 && fs[f].done < 0)
                    act.push_back(int(f));
            if (act.empty() && t > 60)
                break;
            std::vector<double> rem(cap), rate(fs.size(), 0);
            std::vector<bool> fixed(fs.size(), false);
            size_t unfixed = act.size();
            while (unfixed) {
                double share = kNever;
                for (int r = 0; r < nr; ++r) {
                    double d = 0;
                    for (int f : act)
                        if (!fixed[f])
                            for (auto& u : usage[fs[f].c])
                                if (int(u.resource) == r)
                                    d += u.weight;
                    if (d > 0)
                        share = std::min(share, rem[r] / d);
                }
                for (int r = 0; r < nr; ++r) {
                    double d = 0;
                    for (int f : act)
                        if (!fixed[f])
                            for (auto& u : usage[fs[f].c])
                                if (int(u.resource) == r)
                                    d += u.weight;
                    if (d > 0 && rem[r] / d <= share * (1 + 1e-12))
                        for (int f : act)
                            if (!fixed[f])
                                for (auto& u : usage[fs[f].c])
                                    if (int(u.resource) == r && !fixed[f]) {
                                        fixed[f] = true;
                                        rate[f] = share;
                                        --unfixed;
                                        for (auto& v : usage[fs[f].c])
                                            rem[v.resource] -= v.weight * share;
                                    }
                }
            }
            for (int f : act) {
                fs[f].left -= rate[f] * dt;
                if (fs[f].left <= 0)
                    fs[f].done = t + dt + fs[f].left / rate[f];
            }
        }
        for (size_t f = 0; f < fs.size(); ++f)
            EXPECT_NEAR(done[f], fs[f].done, 0.05) << "trial " << trial << " flow " << f;
    }
}

// ---- in order: the oldest flow first ---------------------------------------------------------

TEST(FlowSolverInOrder, EqualFlowsFinishOneAfterTheOther) {
    FlowSolver s(Sharing::InOrder);
    uint32_t r = s.add_resource(10);
    uint32_t c = s.add_class({{r, 1}});
    s.add_flow(c, 100, 0, 1);
    s.add_flow(c, 100, 0, 2);
    s.add_flow(c, 100, 0, 3);
    auto done = run(s);
    EXPECT_DOUBLE_EQ(done[1], 10);
    EXPECT_DOUBLE_EQ(done[2], 20);
    EXPECT_DOUBLE_EQ(done[3], 30);
}

TEST(FlowSolverInOrder, YoungerFlowsTakeWhatOlderOnesLeave) {
    // L1 (1 B/ns), L2 (2 B/ns); the oldest crosses both and fills L1 at 1; the next on L2 takes
    // the 1 left there; the youngest on L1 gets nothing until the oldest is done.
    FlowSolver s(Sharing::InOrder);
    uint32_t l1 = s.add_resource(1), l2 = s.add_resource(2);
    uint32_t c1 = s.add_class({{l1, 1}, {l2, 1}}), c2 = s.add_class({{l2, 1}}), c3 = s.add_class({{l1, 1}});
    s.add_flow(c1, 10, 0, 1);
    s.add_flow(c2, 1e6, 0, 2);
    s.add_flow(c3, 10, 0, 3);
    s.advance(0, [](uint64_t, double) {});
    EXPECT_DOUBLE_EQ(s.class_rate(c1), 1);
    EXPECT_DOUBLE_EQ(s.class_rate(c2), 1);
    EXPECT_DOUBLE_EQ(s.class_rate(c3), 0);
    auto done = run(s, 100);
    EXPECT_DOUBLE_EQ(done[1], 10);
    EXPECT_DOUBLE_EQ(done[3], 20);
    EXPECT_DOUBLE_EQ(s.class_rate(c2), 2);
}

TEST(FlowSolverInOrder, AJoinLeavesOlderFlowsAlone) {
    FlowSolver s(Sharing::InOrder);
    uint32_t a = s.add_resource(4), b = s.add_resource(4);
    uint32_t split = s.add_class({{a, 0.5}, {b, 0.5}}), hot = s.add_class({{a, 1}});
    s.add_flow(split, 80, 0, 1);  // 8 B/ns: both full
    s.add_flow(hot, 40, 5, 2);    // joins at 5, nothing left until 10
    auto done = run(s);
    EXPECT_DOUBLE_EQ(done[1], 10);
    EXPECT_DOUBLE_EQ(done[2], 20);
}

TEST(FlowSolverInOrder, OutageAfterAnIdleGapStartsFromItsPhase) {
    // Down [100k + 30, 100k + 40): a flow joining at 1035 waits until 1040.
    FlowSolver s(Sharing::InOrder);
    uint32_t r = s.add_resource(1);
    uint32_t c = s.add_class({{r, 1}});
    s.add_outage({r}, 30, 100, 10);
    s.add_flow(c, 10, 1035, 1);
    auto done = run(s, 5000);
    EXPECT_DOUBLE_EQ(done[1], 1050);
}

// The in-order allocation against a direct one over flows (oldest first, each the minimum over its
// resources of what is left), on random instances with several flows per class.
TEST(FlowSolverInOrder, RatesEqualAnOldestFirstAllocationOverFlows) {
    nctlm::test::XorShift64 rng{99};
    for (int trial = 0; trial < 300; ++trial) {
        FlowSolver s(Sharing::InOrder);
        const int nr = 1 + int(rng() % 6), nc = 1 + int(rng() % 6);
        const std::vector<double> cap = add_random_resources(s, nr, rng);
        std::vector<std::vector<Usage>> usage(nc);
        for (int c = 0; c < nc; ++c) {
            usage[c].push_back({uint32_t(rng() % nr), 0.1 + double(rng() % 100) / 50});
            for (int r = 0; r < nr; ++r)
                if (rng() % 3 == 0 && r != int(usage[c][0].resource))
                    usage[c].push_back({uint32_t(r), 0.1 + double(rng() % 100) / 50});
            s.add_class(usage[c]);
        }
        std::vector<int> order;  // the class of each flow, oldest first
        for (int f = 0; f < 10; ++f) {
            order.push_back(int(rng() % nc));
            s.add_flow(uint32_t(order.back()), 1e9, 0, uint64_t(f));
        }
        s.advance(0, [](uint64_t, double) {});
        std::vector<double> rem(cap);
        std::vector<double> rate(nc, -1);
        for (int c : order) {
            if (rate[c] >= 0)
                continue;  // behind its class's oldest: waits
            double x = kNever;
            for (auto& u : usage[c])
                x = std::min(x, rem[u.resource] / u.weight);
            rate[c] = x;
            for (auto& u : usage[c])
                rem[u.resource] -= u.weight * x;
        }
        for (int c = 0; c < nc; ++c)
            EXPECT_NEAR(s.class_rate(uint32_t(c)), std::max(0.0, rate[c]), 1e-9) << "trial " << trial << " class " << c;
    }
}

// A resource with a sharing fraction (an HBM PC streamed by several tiles reopens rows): its
// capacity follows the number of groups crossing it; classes of one group count once.
TEST(FlowSolverInOrder, SharingFractionFollowsTheGroupsCrossingAResource) {
    for (Sharing sharing : {Sharing::InOrder, Sharing::Fair}) {
        FlowSolver s(sharing);
        uint32_t pc = s.add_resource(10);
        s.set_sharing_fraction(pc, {1.0, 0.8, 0.5});
        uint32_t a1 = s.add_class({{pc, 1}}), a2 = s.add_class({{pc, 1}}), b = s.add_class({{pc, 1}});
        s.set_class_group(a1, 0);
        s.set_class_group(a2, 0);
        s.set_class_group(b, 1);
        s.add_flow(a1, 100, 0, 1);   // alone: 10 B/ns
        s.add_flow(a2, 100, 0, 2);   // same group: still 10 B/ns in all
        s.add_flow(b, 100, 20, 3);   // a second group from 20: 8 B/ns in all
        s.advance(0, [](uint64_t, double) {});
        EXPECT_DOUBLE_EQ(s.resource_capacity(pc), 10);
        EXPECT_DOUBLE_EQ(s.class_rate(a1) + s.class_rate(a2), 10);
        auto done = run(s);
        EXPECT_DOUBLE_EQ(s.resource_capacity(pc), 10);  // nothing crossing: nominal again
        // 200 B of group 0 at 10 B/ns would end at 20; b joins then; 100 B at 10 B/ns once alone.
        EXPECT_DOUBLE_EQ(std::max(done[1], done[2]), 20);
        EXPECT_DOUBLE_EQ(done[3], 30);
    }
    FlowSolver s(Sharing::InOrder);
    uint32_t pc = s.add_resource(10);
    s.set_sharing_fraction(pc, {1.0, 0.8, 0.5});
    uint32_t a = s.add_class({{pc, 1}}), b = s.add_class({{pc, 1}}), c = s.add_class({{pc, 1}});
    s.add_flow(a, 100, 0, 1);  // ungrouped: each class its own group
    s.add_flow(b, 100, 0, 2);
    s.add_flow(c, 100, 0, 3);
    s.advance(0, [](uint64_t, double) {});
    EXPECT_DOUBLE_EQ(s.resource_capacity(pc), 5);  // three crossing: the last entry
    EXPECT_DOUBLE_EQ(s.class_rate(a), 5);          // the oldest takes all of it
    auto done = run(s);
    EXPECT_DOUBLE_EQ(done[1], 20);                 // 100 B at 5 B/ns
    EXPECT_DOUBLE_EQ(done[2], 20 + 100 / 8.0);     // two left: 8 B/ns
    EXPECT_DOUBLE_EQ(done[3], 20 + 100 / 8.0 + 10);
    EXPECT_THROW(s.set_sharing_fraction(pc, {1.2}), std::invalid_argument);
}

namespace {
struct RefFlow {
    int c;
    double join, left, done = -1;
};

// The in-order allocation simulated directly over flows (sets fs[f].done). header[c][k]: class c's
// usage entry k is header usage (models/flow/flow_solver.h): while a head with header usage moves,
// every join and finish allocates every head again, after reserving each header usage its weighted
// fair share, and gives what the reservations left unused back to the heads, oldest first.
void reference_in_order(const std::vector<double>& cap, const std::vector<std::vector<Usage>>& usage,
                        std::vector<RefFlow>& fs, const std::vector<std::vector<bool>>& header = {}) {
    const int nf = int(fs.size()), nc = int(usage.size());
    // Per flow: a class serves its flows in the order they joined; at a finish every
    // head is allocated again, oldest (first added) first, each the minimum over its resources
    // of what older heads left; a head that joins takes what the others leave.
    std::vector<int> by_join(nf);
    for (int f = 0; f < nf; ++f)
        by_join[f] = f;
    std::stable_sort(by_join.begin(), by_join.end(), [&](int a, int b) { return fs[a].join < fs[b].join; });
    std::vector<int> head(nc, -1);
    std::vector<double> rate(nf, 0);
    auto left_over = [&](int except) {
        std::vector<double> rem(cap);
        for (int c = 0; c < nc; ++c)
            if (head[c] >= 0 && head[c] != except)
                for (auto& u : usage[c])
                    rem[u.resource] -= u.weight * rate[head[c]];
        return rem;
    };
    auto take = [&](int f, std::vector<double>& rem) {
        double x = kNever;
        for (auto& u : usage[fs[f].c])
            x = std::min(x, std::max(0.0, rem[u.resource]) / u.weight);
        rate[f] = x > 1e-15 ? x : 0;
        for (auto& u : usage[fs[f].c])
            rem[u.resource] -= u.weight * rate[f];
    };
    auto next_head = [&](int c, double t) {
        head[c] = -1;
        for (int f : by_join)
            if (fs[f].c == c && fs[f].done < 0 && fs[f].join <= t)
                return head[c] = f;
        return -1;
    };
    auto has_headers = [&](int c) {
        return !header.empty() && std::find(header[c].begin(), header[c].end(), true) != header[c].end();
    };
    auto headers_moving = [&] {
        for (int c = 0; c < nc; ++c)
            if (head[c] >= 0 && has_headers(c))
                return true;
        return false;
    };
    auto solve_all = [&] {
        std::vector<int> order;
        for (int f = 0; f < nf; ++f)
            if (head[fs[f].c] == f)
                order.push_back(f);
        std::vector<double> rem(cap), demand(cap.size(), 0);
        std::vector<std::vector<double>> held(nc);
        const bool reserve = headers_moving();
        for (int f : order)
            for (const Usage& u : usage[fs[f].c])
                demand[u.resource] += u.weight;
        for (int f : order) {
            const int c = fs[f].c;
            held[c].assign(usage[c].size(), 0);
            for (size_t k = 0; reserve && k < usage[c].size(); ++k)
                if (header[c][k]) {
                    held[c][k] = cap[usage[c][k].resource] * usage[c][k].weight / demand[usage[c][k].resource];
                    rem[usage[c][k].resource] = std::max(0.0, rem[usage[c][k].resource] - held[c][k]);
                }
        }
        for (int f : order) {
            const int c = fs[f].c;
            for (size_t k = 0; k < usage[c].size(); ++k)
                rem[usage[c][k].resource] += held[c][k];
            take(f, rem);
        }
        for (int f : order) {
            if (!reserve)
                break;
            double extra = kNever;
            for (const Usage& u : usage[fs[f].c])
                extra = std::min(extra, rem[u.resource] / u.weight);
            if (!(extra > 1e-12 * rate[f] + 1e-15))
                continue;
            rate[f] += extra;
            for (const Usage& u : usage[fs[f].c])
                rem[u.resource] -= u.weight * extra;
        }
    };
    double t = 0;
    size_t joined = 0;
    while (true) {
        double next = joined < by_join.size() ? fs[by_join[joined]].join : kNever;
        for (int c = 0; c < nc; ++c)
            if (head[c] >= 0 && rate[head[c]] > 0)
                next = std::min(next, t + fs[head[c]].left / rate[head[c]]);
        if (!(next < kNever))
            break;
        for (int c = 0; c < nc; ++c)
            if (head[c] >= 0)
                fs[head[c]].left -= rate[head[c]] * (next - t);
        t = next;
        for (; joined < by_join.size() && fs[by_join[joined]].join <= t; ++joined) {
            const int f = by_join[joined];
            if (head[fs[f].c] >= 0)
                continue;  // behind its class's head
            head[fs[f].c] = f;
            if (headers_moving()) {
                solve_all();
                continue;
            }
            auto rem = left_over(f);
            take(f, rem);
        }
        bool finished = false;
        for (int c = 0; c < nc; ++c)
            if (head[c] >= 0 && rate[head[c]] > 0 && fs[head[c]].left <= 1e-9 * rate[head[c]]) {
                fs[head[c]].done = t;
                rate[head[c]] = 0;
                next_head(c, t);
                finished = true;
            }
        if (finished)
            solve_all();
    }
}
} // namespace

// Finish times of the in-order solver (its shortcuts: a class's last bottleneck looked at first,
// finishes looked for only near the earliest one, packed sort keys) against a direct event-driven
// oldest-first allocation over flows, on random flow sets with staggered joins, several flows per
// class and resources that many classes fill.
TEST(FlowSolverInOrder, FinishTimesEqualADirectOldestFirstSimulation) {
    nctlm::test::XorShift64 rng{2024};
    for (int trial = 0; trial < 200; ++trial) {
        FlowSolver s(Sharing::InOrder);
        const int nr = 1 + int(rng() % 8), nc = 1 + int(rng() % 10), nf = 1 + int(rng() % 40);
        const std::vector<double> cap = add_random_resources(s, nr, rng);
        std::vector<std::vector<Usage>> usage(nc);
        for (int c = 0; c < nc; ++c) {
            for (int r = 0; r < nr; ++r)
                if (rng() % 2 == 0)
                    usage[c].push_back({uint32_t(r), 0.1 + double(rng() % 100) / 50});
            if (usage[c].empty())
                usage[c].push_back({uint32_t(rng() % nr), 1});
            s.add_class(usage[c]);
        }
        std::vector<RefFlow> fs;
        for (int f = 0; f < nf; ++f) {
            fs.push_back({int(rng() % nc), double(rng() % 100), 1 + double(rng() % 500)});
            s.add_flow(uint32_t(fs.back().c), fs.back().left, fs.back().join, uint64_t(f));
        }
        auto done = run(s);
        reference_in_order(cap, usage, fs);
        for (int f = 0; f < nf; ++f) {
            ASSERT_GE(fs[f].done, 0) << "trial " << trial << " flow " << f;
            EXPECT_NEAR(done[uint64_t(f)], fs[f].done, 1e-6 * (1 + fs[f].done)) << "trial " << trial << " flow " << f;
        }
    }
}

namespace {
// Random flows (nf, over the classes of `usage`, joins spread over 500 ns) through the component-wise
// solver, advanced in steps of 37 ns to look at its components between, against the direct
// simulation; what the solver's resources did (sides changed, components) added to `seen`.
struct SidesSeen {
    uint64_t promotions = 0, demotions = 0;
    size_t most_components = 0;
};
void flows_against_direct_simulation(FlowSolver& s, const std::vector<double>& cap,
                                     const std::vector<std::vector<Usage>>& usage,
                                     const std::vector<std::vector<bool>>& header, int nf,
                                     nctlm::test::XorShift64& rng, int trial, SidesSeen& seen) {
    const int nc = int(usage.size());
    std::vector<RefFlow> fs;
    for (int f = 0; f < nf; ++f) {
        fs.push_back({int(rng() % nc), double(rng() % 2000), 1 + double(rng() % 500)});
        s.add_flow(uint32_t(fs.back().c), fs.back().left, fs.back().join, uint64_t(f));
    }
    std::map<uint64_t, double> done;
    for (double t = 0; s.next_event() < kNever; t += 37) {
        s.advance(t, [&](uint64_t tag, double at) { done[tag] = at; });
        seen.most_components = std::max(seen.most_components, s.components());
    }
    reference_in_order(cap, usage, fs, header);
    for (int f = 0; f < nf; ++f) {
        ASSERT_GE(fs[f].done, 0) << "trial " << trial << " flow " << f;
        EXPECT_NEAR(done[uint64_t(f)], fs[f].done, 1e-6 * (1 + fs[f].done)) << "trial " << trial << " flow " << f;
    }
    seen.promotions += s.promotions();
    seen.demotions += s.demotions();
}

// Sizes of a DMA-like set: pseudo-channels (small, the first npc resources), groups' data paths
// (large, the next ngroup), classes and flows.
struct DmaLikeSet {
    int npc, ngroup, nc, nf;
    std::vector<double> cap;
};
DmaLikeSet dma_like_set(nctlm::test::XorShift64& rng) {
    DmaLikeSet d;
    d.npc = 2 + int(rng() % 12);
    d.ngroup = 1 + int(rng() % 4);
    d.nc = 2 + int(rng() % 20);
    d.nf = 20 + int(rng() % 300);
    for (int r = 0; r < d.npc; ++r)
        d.cap.push_back(1 + double(rng() % 100) / 20);
    for (int g = 0; g < d.ngroup; ++g)
        d.cap.push_back(2 + double(rng() % 400) / 20);
    return d;
}
} // namespace

// The component-wise solve (models/flow/flow_solver.h: only binding resources couple classes; a
// change re-solves its component; resources change sides as they fill and empty) against the same
// direct simulation, on flow sets shaped like DMA traffic: each class crosses one small resource
// (a pseudo-channel) and a large one shared by its group (a data path, a link) that fills only when
// several of the group's classes move at once. The sets make resources change sides: that must
// happen (promotions and demotions counted) and change no finish time.
TEST(FlowSolverInOrder, ComponentSolveEqualsTheWholeDirectSimulation) {
    nctlm::test::XorShift64 rng{77};
    SidesSeen seen;
    for (int trial = 0; trial < 100; ++trial) {
        FlowSolver s(Sharing::InOrder);
        const DmaLikeSet set = dma_like_set(rng);
        const int npc = set.npc, ngroup = set.ngroup, nc = set.nc, nf = set.nf;
        std::vector<double> cap = set.cap;
        for (double c : cap)
            s.add_resource(c);
        std::vector<std::vector<Usage>> usage(nc);
        for (int c = 0; c < nc; ++c) {
            usage[c].push_back({uint32_t(rng() % npc), 0.5 + double(rng() % 100) / 100});
            if (rng() % 4 == 0) {  // some classes spread over two
                const uint32_t other = uint32_t(rng() % npc);
                if (other != usage[c][0].resource)
                    usage[c].push_back({other, 0.5 + double(rng() % 100) / 100});
            }
            usage[c].push_back({uint32_t(npc + int(rng() % ngroup)), 1});
            s.add_class(usage[c]);
        }
        flows_against_direct_simulation(s, cap, usage, {}, nf, rng, trial, seen);
    }
    EXPECT_GT(seen.promotions, 100u);
    EXPECT_GT(seen.demotions, 10u);
    EXPECT_GT(seen.most_components, 3u);
}

// Header usage under the component-wise solve: a resource marked as header usage is binding for
// good, its component reserves and tops up over its own heads, and a join while a marked head moves
// is sorted in at once. Against the direct simulation with header usage, on DMA-like sets where
// some classes also cross two link directions (data and header on one, headers only, marked, on
// the other), and the rest stay in components of their own that resources join and leave.
TEST(FlowSolverInOrder, ComponentSolveWithHeaderUsageEqualsTheWholeDirectSimulation) {
    nctlm::test::XorShift64 rng{4242};
    SidesSeen seen;
    for (int trial = 0; trial < 100; ++trial) {
        FlowSolver s(Sharing::InOrder);
        const DmaLikeSet set = dma_like_set(rng);
        const int npc = set.npc, ngroup = set.ngroup, nc = set.nc, nf = set.nf;
        std::vector<double> cap = set.cap;
        const uint32_t link = uint32_t(cap.size());
        cap.push_back(1 + double(rng() % 200) / 20);
        cap.push_back(1 + double(rng() % 200) / 20);
        for (double c : cap)
            s.add_resource(c);
        std::vector<std::vector<Usage>> usage(nc);
        std::vector<std::vector<bool>> header(nc);
        for (int c = 0; c < nc; ++c) {
            usage[c].push_back({uint32_t(rng() % npc), 0.5 + double(rng() % 100) / 100});
            usage[c].push_back({uint32_t(npc + int(rng() % ngroup)), 1});
            header[c].assign(2, false);
            if (rng() % 3 == 0) {  // over the links: data (and headers) one way, headers only the other
                const uint32_t d = uint32_t(rng() % 2);
                const double h = 0.01 + double(rng() % 20) / 100;
                usage[c].push_back({link + d, 1 + h});
                usage[c].push_back({link + 1 - d, h});
                header[c].push_back(false);
                header[c].push_back(rng() % 4 != 0);  // some unmarked: the mark, not the weight, decides
            }
            const uint32_t cls = s.add_class(usage[c]);
            for (size_t k = 0; k < usage[c].size(); ++k)
                if (header[c][k])
                    s.set_header_usage(cls, usage[c][k].resource);
        }
        flows_against_direct_simulation(s, cap, usage, header, nf, rng, trial, seen);
    }
    EXPECT_GT(seen.promotions, 100u);
    EXPECT_GT(seen.demotions, 10u);
    EXPECT_GT(seen.most_components, 3u);
}

// ---- in order with header usage (a NeuronLink direction: one chip's write data, the other's acks)

// Two chips write to each other: X (older) sends its data on a (weight 1 + h: data and header) and
// its acknowledgements come back on b (h); Y the other way. Oldest first alone, X fills a and Y's
// acknowledgements get nothing there: Y waits for X (the transfers run one after the other). With
// the acknowledgements marked as headers, each is first given its weighted fair share of the other's
// direction: both move at C / (1 + 2h), as a wire that books bursts in arrival order lets them.
TEST(FlowSolverInOrder, HeaderUsageIsNotStarvedByAnOlderFlowThatFillsTheResource) {
    const double cap = 10, h = 64.0 / 2048, bytes = 1000;
    for (bool headers : {false, true}) {
        FlowSolver s(Sharing::InOrder);
        uint32_t a = s.add_resource(cap), b = s.add_resource(cap);
        uint32_t x = s.add_class({{a, 1 + h}, {b, h}}), y = s.add_class({{b, 1 + h}, {a, h}});
        if (headers) {
            s.set_header_usage(x, b);
            s.set_header_usage(y, a);
        }
        s.add_flow(x, bytes, 0, 1);
        s.add_flow(y, bytes, 0, 2);
        s.advance(0, [](uint64_t, double) {});
        auto done = run(s);
        if (!headers) {  // the starvation the header usage removes
            EXPECT_DOUBLE_EQ(done[1], bytes * (1 + h) / cap);
            EXPECT_DOUBLE_EQ(done[2], 2 * bytes * (1 + h) / cap);
            continue;
        }
        EXPECT_NEAR(done[1], bytes * (1 + 2 * h) / cap, 1e-9);
        EXPECT_NEAR(done[2], bytes * (1 + 2 * h) / cap, 1e-9);
    }
}

// What a header reservation leaves unused (its class limited elsewhere) goes back to the older
// heads: Y is capped at 1 B/ns by its own resource, so X gets all of a but Y's h x 1.
TEST(FlowSolverInOrder, AnUnusedHeaderReservationGoesBackToOlderHeads) {
    const double cap = 10, h = 0.25;
    FlowSolver s(Sharing::InOrder);
    uint32_t a = s.add_resource(cap), slow = s.add_resource(1);
    uint32_t x = s.add_class({{a, 1}}), y = s.add_class({{slow, 1}, {a, h}});
    s.set_header_usage(y, a);
    s.add_flow(x, 1e6, 0, 1);
    s.add_flow(y, 1e6, 0, 2);
    s.advance(0, [](uint64_t, double) {});
    EXPECT_NEAR(s.class_rate(y), 1, 1e-12);
    EXPECT_NEAR(s.class_rate(x), cap - h, 1e-12);
    EXPECT_THROW(s.set_header_usage(x, slow), std::invalid_argument);  // a resource x does not cross
}

// Random instances with header usage: no resource is over capacity; no head could move faster
// (each crosses a full resource: what reservations left unused went back); and the rates equal a
// direct allocation over class heads: each header usage reserved capacity x weight / the weights
// of the heads crossing its resource; heads oldest first, each taking the minimum over its
// resources of what is left (its own reservations counted in); then the same pass again over what
// is left.
TEST(FlowSolverInOrder, HeaderSharesOnRandomInstances) {
    nctlm::test::XorShift64 rng{31};
    for (int trial = 0; trial < 400; ++trial) {
        FlowSolver s(Sharing::InOrder);
        const int nr = 2 + int(rng() % 5), nc = 1 + int(rng() % 8);
        const std::vector<double> cap = add_random_resources(s, nr, rng);
        std::vector<std::vector<Usage>> usage(nc);
        std::vector<std::vector<bool>> header(nc);
        for (int c = 0; c < nc; ++c) {
            for (int r = 0; r < nr; ++r)
                if (rng() % 2 == 0 || (r == nr - 1 && usage[c].empty())) {
                    const bool hdr = rng() % 3 == 0;
                    usage[c].push_back({uint32_t(r), hdr ? 0.01 + double(rng() % 30) / 100 : 1 + double(rng() % 50) / 50});
                    header[c].push_back(hdr);
                }
            const uint32_t cls = s.add_class(usage[c]);
            for (size_t k = 0; k < usage[c].size(); ++k)
                if (header[c][k])
                    s.set_header_usage(cls, usage[c][k].resource);
        }
        std::vector<int> heads;  // classes by their oldest flow
        for (int f = 0; f < 12; ++f) {
            const int c = int(rng() % nc);
            if (std::find(heads.begin(), heads.end(), c) == heads.end())
                heads.push_back(c);
            s.add_flow(uint32_t(c), 1e9, 0, uint64_t(f));
        }
        s.advance(0, [](uint64_t, double) {});
        // The reference.
        std::vector<double> rem(cap), demand(nr, 0), rate(nc, 0);
        std::vector<std::vector<double>> held(nc);
        for (int c : heads)
            for (const Usage& u : usage[c])
                demand[u.resource] += u.weight;
        for (int c : heads)
            for (size_t k = 0; k < usage[c].size(); ++k) {
                held[c].push_back(header[c][k] ? cap[usage[c][k].resource] * usage[c][k].weight / demand[usage[c][k].resource] : 0);
                rem[usage[c][k].resource] -= held[c][k];
            }
        for (int pass = 0; pass < 2; ++pass)
            for (int c : heads) {
                double x = kNever;
                for (size_t k = 0; k < usage[c].size(); ++k) {
                    rem[usage[c][k].resource] += held[c][k];
                    held[c][k] = 0;
                    x = std::min(x, std::max(0.0, rem[usage[c][k].resource]) / usage[c][k].weight);
                }
                rate[c] += x;
                for (const Usage& u : usage[c])
                    rem[u.resource] -= u.weight * x;
            }
        std::vector<double> used(nr, 0);
        for (int c = 0; c < nc; ++c) {
            EXPECT_NEAR(s.class_rate(uint32_t(c)), rate[c], 1e-9 * (1 + rate[c])) << "trial " << trial << " class " << c;
            for (const Usage& u : usage[c])
                used[u.resource] += u.weight * s.class_rate(uint32_t(c));
        }
        for (int r = 0; r < nr; ++r)
            EXPECT_LE(used[r], cap[r] * (1 + 1e-9)) << "trial " << trial << " resource " << r;
        for (int c : heads) {
            bool limited = false;
            for (const Usage& u : usage[c])
                limited = limited || used[u.resource] >= cap[u.resource] * (1 - 1e-9);
            EXPECT_TRUE(limited) << "trial " << trial << " class " << c << ": could move faster";
        }
    }
}
