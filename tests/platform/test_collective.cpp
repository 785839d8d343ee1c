// The collective testbench on multi-chip platforms: its bus bandwidth comes from the link
// parameters (bounded by them, and moving with them), every ring link carries the closed form's
// bytes, the shipped trn1-16 and trn2-16 at 2/4/8/16 ranks, on-chip ranks, and bad input.
#include "models/analytic/collective_model.h"
#include "models/common/stats.h"
#include "models/link/chip_topology.h"
#include "tests/support.h"

#include <cmath>
#include <fmt/format.h>
#include <fstream>
#include <gtest/gtest.h>
#include <random>
#include <regex>
#include <sstream>

using namespace nctlm;

namespace {

nlohmann::json run(const std::string& platform, std::vector<std::string> sets) {
    RunOutcome out = test::run_testbench(platform, "collective", sets);
    EXPECT_TRUE(out.errors.empty()) << (out.errors.empty() ? "" : out.errors.front());
    return out.report["results"];
}

double link_gbps(const std::string& platform) {
    ConfigTree t = ConfigTree::from_file(test::platform(platform));
    return PlatformConfig::load(t).link.wire_bandwidth.bytes_per_s / 1e9;
}

// A ring all-reduce over n chips of a shipped 16-chip platform: below the link's bandwidth, above
// half of it at 8 MiB (latency is a few microseconds a step), and never faster than the wire.
void ring_over_chips(const std::string& platform, uint32_t n) {
    const uint64_t size = 8ull << 20;
    nlohmann::json r = run(platform, {fmt::format("testbench.ranks={}", n), "workload.size=8 MiB"});
    ASSERT_FALSE(r.is_null());
    const double link = link_gbps(platform), busbw = r["busbw_gb_per_s"];
    EXPECT_EQ(r["chips"].get<uint32_t>(), n);
    EXPECT_LT(busbw, link) << "faster than the link";
    EXPECT_GT(busbw, 0.5 * link) << platform << " " << n << " ranks";
    auto f = analytic::ring_closed_form(collective::Operation::AllReduce, n, size, link * 1e9, 0);
    EXPECT_GE(r["time_ns"].get<double>(), f.time_ns) << "faster than steps x chunk / link bandwidth";
    EXPECT_EQ(r["steps"].get<uint32_t>(), f.steps);
    // nccom-test's definitions, from the reported time.
    double algbw = double(size) / (r["time_ns"].get<double>() * 1e-9);
    EXPECT_NEAR(r["algbw_gib_per_s"].get<double>(), algbw / (1ull << 30), 1e-9 * algbw);
    EXPECT_NEAR(busbw, algbw * 2 * (n - 1) / n / 1e9, 1e-9 * algbw);
}

} // namespace

TEST(CollectiveFigures, Trn1RingOver2Chips) { ring_over_chips("trn1-16", 2); }
TEST(CollectiveFigures, Trn1RingOver4Chips) { ring_over_chips("trn1-16", 4); }
TEST(CollectiveFigures, Trn1RingOver8Chips) { ring_over_chips("trn1-16", 8); }
TEST(CollectiveFigures, Trn1RingOver16Chips) { ring_over_chips("trn1-16", 16); }
TEST(CollectiveFigures, Trn2RingOver2Chips) { ring_over_chips("trn2-16", 2); }
TEST(CollectiveFigures, Trn2RingOver4Chips) { ring_over_chips("trn2-16", 4); }
TEST(CollectiveFigures, Trn2RingOver8Chips) { ring_over_chips("trn2-16", 8); }
TEST(CollectiveFigures, Trn2RingOver16Chips) { ring_over_chips("trn2-16", 16); }

// The bus bandwidth of a 2-chip all-reduce comes from the link: on random link bandwidths of
// 4-24 GB/s (well below what a NeuronCore's DMA and HBM move) with random latency and enough
// credits not to bind, it is 85-100 % of link.bandwidth on trn1-16 and trn2-16 (the rest: a 64 B
// header per 2 KiB burst, flags, the pipeline's fill and drain).
TEST(CollectiveFigures, BusBandwidthFollowsTheLinkBandwidth) {
    std::mt19937 rng(4242);
    auto pick = [&](uint32_t lo, uint32_t hi) { return std::uniform_int_distribution<uint32_t>(lo, hi)(rng); };
    for (int trial = 0; trial < 4; ++trial) {
        const std::string platform = trial % 2 == 0 ? "trn1-16" : "trn2-16";
        const double gbps = pick(4, 24), latency = pick(50, 1000);
        // Credits that carry at least twice the wire's rate: credits x burst / (latency + burst / rate).
        const double burst = 2048 + 64;
        const uint32_t credits = uint32_t(std::ceil(2 * gbps * (latency + burst / gbps) / burst)) + pick(0, 16);
        const std::string what = fmt::format("{}: link {} GB/s {} ns {} credits", platform, gbps, latency, credits);
        const std::string out = test::temp_file("", ".json");
        test::CliResult cli = test::run_cli(fmt::format(
            "run -p {} -t collective --set testbench.ranks=2 --set workload.size=16MiB --set link.bandwidth={}GB/s "
            "--set link.latency={}ns --set link.credits={} -o {}",
            platform, gbps, latency, credits, out));
        ASSERT_EQ(cli.exit_code, 0) << what << "\n" << cli.err;
        std::ifstream in(out);
        const double busbw = nlohmann::json::parse(in)["results"]["busbw_gb_per_s"];
        EXPECT_LT(busbw, gbps) << what;
        EXPECT_GT(busbw, 0.85 * gbps) << what << ": the slow link is the bound, little else shows";
    }
}

// Each ring link carries exactly the closed form's data (2(n-1)/n of the size), plus a header per
// 2 KiB burst and a 64 B flag (plus its header) per step and slice; the reverse wire only the
// acknowledgements.
TEST(CollectiveFigures, EveryRingLinkCarriesTheClosedFormBytes) {
    const uint32_t n = 4;
    const uint64_t size = 8ull << 20;
    nlohmann::json r = run("trn2-16", {"testbench.ranks=4", "workload.size=8 MiB"});
    ASSERT_FALSE(r.is_null());
    auto f = analytic::ring_closed_form(collective::Operation::AllReduce, n, size, 1e9, 0);
    const double header = 64, burst = 2048, flag = 64;
    const double expected = f.bytes_per_link + f.bytes_per_link / burst * header + f.steps * 2 * (flag + header);
    const double acks = (f.bytes_per_link / burst + f.steps * 2) * header;
    // Ranks 0..3 on chips 0..3 (row 0): 0->1->2->3 on the x cables, 3->0 on chip 3's wrap-around.
    for (const char* l : {"link0_x.a_to_b", "link1_x.a_to_b", "link2_x.a_to_b", "link3_x.a_to_b"})
        EXPECT_DOUBLE_EQ(stats().value(std::string("top.") + l + ".bytes"), expected) << l;
    for (const char* l : {"link0_x.b_to_a", "link1_x.b_to_a", "link2_x.b_to_a", "link3_x.b_to_a"})
        EXPECT_DOUBLE_EQ(stats().value(std::string("top.") + l + ".bytes"), acks) << l;
    EXPECT_EQ(stats().value("top.link0_y.a_to_b.bytes"), 0) << "the y links are not on the ring";
    EXPECT_EQ(r["bytes_sent_between_ranks"].get<double>(), n * f.bytes_per_link);
}

// On random valid multi-chip platforms (tiny chips: torus or ring, 2-12 chips; random link
// bandwidth, latency and credits; random ring op, ranks and size): the collective finishes, the
// links carry exactly the closed form's bytes times each ring edge's hop count (requests one way,
// acknowledgements the other), and no ring edge beats its two mechanisms' bounds - the wire
// (bytes / link.bandwidth) and the credits (each of `link.credits` receive slots is held from
// acceptance until the far NoC takes the request, at least latency + bytes / bandwidth: Little's
// law).
TEST(CollectiveFigures, LinksCarryTheClosedFormAndBoundTheTimeOnRandomPlatforms) {
    std::mt19937 rng(2112);
    auto pick = [&](uint32_t lo, uint32_t hi) { return std::uniform_int_distribution<uint32_t>(lo, hi)(rng); };
    const collective::Operation ops[] = {collective::Operation::AllReduce, collective::Operation::AllGather,
                                         collective::Operation::ReduceScatter};
    const double header = 64, flag = 64, burst = 1024;  // tiny: dma.burst_size 1 KiB
    const uint32_t slices = 2;
    for (int trial = 0; trial < 12; ++trial) {
        const bool torus = trial % 2 == 0;
        uint32_t chips, width;
        if (torus) {
            const std::pair<uint32_t, uint32_t> shapes[] = {{4, 2}, {6, 3}, {6, 2}, {8, 4}, {8, 2}, {9, 3}, {12, 4}};
            std::tie(chips, width) = shapes[pick(0, 6)];
        } else {
            chips = pick(2, 8);
            width = chips;
        }
        const uint32_t n = pick(2, chips);
        const collective::Operation op = ops[pick(0, 2)];
        const uint64_t size = uint64_t(n) * slices * (256 << 10) * pick(1, 2);
        const double gbps = pick(4, 40), latency = pick(20, 1000), credits = pick(1, 48);
        const std::string what = fmt::format("{} chips ({} width {}), {} {} ranks {} B, link {} GB/s {} ns {} credits",
                                             chips, torus ? "torus" : "ring", width, collective::op_name(op), n,
                                             size, gbps, latency, credits);
        std::string sets;
        for (const std::string& kv : {fmt::format("platform.chips={}", chips),
                                      fmt::format("link.topology={}", torus ? "torus" : "ring"),
                                      fmt::format("link.torus_width={}", width),
                                      fmt::format("link.bandwidth={}GB/s", gbps),
                                      fmt::format("link.latency={}ns", latency), fmt::format("link.credits={}", credits),
                                      std::string("link.request_bytes=64B"), std::string("testbench.flag_bytes=64B"),
                                      fmt::format("testbench.slices={}", slices),
                                      fmt::format("testbench.op={}", collective::op_name(op)),
                                      fmt::format("testbench.ranks={}", n), fmt::format("workload.size={}B", size)})
            sets += " --set " + kv;
        // One simulation per process (SystemC elaborates once).
        const std::string out = test::temp_file("", ".json");
        test::CliResult cli = test::run_cli("run -p tiny -t collective" + sets + " -o " + out);
        ASSERT_EQ(cli.exit_code, 0) << what << "\n" << cli.err;
        std::ifstream in(out);
        nlohmann::json r = nlohmann::json::parse(in)["results"];
        ASSERT_FALSE(r.is_null()) << what;
        const double t = r["time_ns"];
        auto f = analytic::ring_closed_form(op, n, size, gbps * 1e9, 0);
        EXPECT_EQ(r["steps"].get<uint32_t>(), f.steps) << what;
        EXPECT_GE(t, f.time_ns * (1 - 1e-12)) << what << ": faster than the wire";

        // Per ring edge (rank k -> k + 1): its requests and their acknowledgements, over each hop.
        const double requests = f.bytes_per_link / burst + f.steps * slices;
        const double request_bytes = f.bytes_per_link + requests * header + f.steps * slices * flag;
        const double ack_bytes = requests * header;
        ChipTopology topo(chips, torus ? ChipTopologyKind::Torus : ChipTopologyKind::Ring, width);
        double expected_link_bytes = 0;
        bool neighbours = true;
        for (uint32_t k = 0; k < n; ++k) {
            uint32_t a = r["per_rank"][k]["chip"], b = r["per_rank"][(k + 1) % n]["chip"];
            uint32_t hops = topo.hops(a, b);
            neighbours = neighbours && hops == 1;
            expected_link_bytes += hops * (request_bytes + ack_bytes);
        }
        double link_bytes = 0;
        for (auto& [name, l] : r["links"].items())
            link_bytes += l["bytes"].get<double>();
        EXPECT_NEAR(link_bytes, expected_link_bytes, 1e-9 * expected_link_bytes) << what;
        if (neighbours) {  // every directed link carries one edge's requests on one virtual channel
            const double wire_bound = request_bytes / gbps;  // ns
            const double credit_bound = (requests * latency + wire_bound) / credits;
            EXPECT_GE(t, wire_bound * (1 - 1e-12)) << what;
            EXPECT_GE(t, credit_bound * (1 - 1e-12)) << what << ": more requests in flight than credits";
        }
    }
}

// The 32 MiB rows of docs/models/collective.md's 2-rank table are what the model gives now (a
// drift check: a change that moves them must update the page).
TEST(CollectiveFigures, TheDocsTwoRankRowsAreTheModels) {
    std::ifstream doc(test::source_path("docs/models/collective.md"));
    std::stringstream text;
    text << doc.rdbuf();
    struct Row {
        std::string starts, platform, sets;
    };
    for (const Row& row : std::vector<Row>{
             {"| trn1-16: 2 chips, one NeuronLink-v2", "trn1-16", "--set workload.size=32MiB"},
             {"| trn2-16: 2 chips, one NeuronLink-v3", "trn2-16", "--set workload.size=32MiB"},
             {"| trn1: the 2 NeuronCores of one chip", "trn1", "-w collective_allr_r2_32mb"},
         }) {
        const std::string page = text.str();
        const size_t at = page.find(row.starts);
        ASSERT_NE(at, std::string::npos) << row.starts;
        // | ranks on | size, type | time (us) | busbw (GiB/s) ...
        std::vector<std::string> cells;
        std::stringstream line(page.substr(at + 1, page.find('\n', at) - at - 1));
        for (std::string cell; std::getline(line, cell, '|');)
            cells.push_back(cell);
        ASSERT_GE(cells.size(), 4u) << row.starts;
        const double doc_time = std::stod(std::regex_replace(cells[2], std::regex("[^0-9.]"), ""));
        const double doc_busbw = std::stod(cells[3]);
        const std::string out = test::temp_file("", ".json");
        test::CliResult cli = test::run_cli(
            fmt::format("run -p {} -t collective --set testbench.ranks=2 {} -o {}", row.platform, row.sets, out));
        ASSERT_EQ(cli.exit_code, 0) << cli.err;
        std::ifstream in(out);
        nlohmann::json r = nlohmann::json::parse(in)["results"];
        EXPECT_NEAR(r["time_us"].get<double>(), doc_time, 0.06) << row.starts;
        EXPECT_NEAR(r["busbw_gib_per_s"].get<double>(), doc_busbw, 0.006) << row.starts;
    }
}

// Ranks on one chip's NeuronCores move over the NoC: no link carries anything.
TEST(CollectiveFigures, RanksOnOneChipStayOnItsNoc) {
    nlohmann::json r = run("trn2-16", {"testbench.ranks=8", "testbench.ranks_per_chip=8", "workload.size=4 MiB"});
    ASSERT_FALSE(r.is_null());
    EXPECT_EQ(r["chips"].get<uint32_t>(), 1u);
    EXPECT_TRUE(r["links"].empty()) << r["links"].dump();
    EXPECT_GT(r["busbw_gb_per_s"].get<double>(), 0);
}

// The tree on 8 chips: it finishes and its steps are the closed form's.
TEST(CollectiveFigures, TreeAllGatherOverEightChipsRuns) {
    nlohmann::json r = run("trn1-16", {"testbench.ranks=8", "testbench.algorithm=tree", "testbench.op=all_gather",
                                       "workload.size=2 MiB"});
    ASSERT_FALSE(r.is_null());
    EXPECT_EQ(r["steps"].get<uint32_t>(), analytic::tree_steps(8));
    EXPECT_GT(r["busbw_gb_per_s"].get<double>(), 0);
}

TEST(CollectiveBadInput, ExitsTwoNamingTheProblem) {
    struct Case {
        std::string sets, words;
    };
    for (const Case& c : std::vector<Case>{
             {"--set testbench.ranks=17", "ranks > chips x cores"},
             {"--set testbench.ranks=16 --set testbench.ranks_per_chip=2 --set testbench.core_stride=8",
              "ranks > chips x cores"},
             {"--set testbench.ranks=3 --set workload.size=1000B", "multiple of 12"},
             {"--set testbench.algorithm=mesh", "testbench.algorithm"},
             {"--set testbench.op=broadcast", "testbench.op"},
             {"--set testbench.ranks=1", "testbench.ranks"},
             {"--set testbench.tile_bytes=128KiB", "SBUF"},
         }) {
        test::CliResult r = test::run_cli("run -p trn1-16 -t collective --set workload.size=1MiB " + c.sets);
        EXPECT_EQ(r.exit_code, 2) << c.sets << "\n" << r.err;
        EXPECT_NE(r.err.find(c.words), std::string::npos) << c.sets << "\n" << r.err;
    }
}

// The loosely-timed mode over chips is slower than AT by a measured margin (docs/performance.md,
// "Multi-chip under LT"); this holds it there, so a change in either shows.
TEST(CollectiveFigures, LooselyTimedOverChipsStaysWithinItsMeasuredError) {
    auto time_us = [](const std::string& timing, uint32_t ranks) {
        std::string out = test::temp_file("", ".json");
        test::CliResult r = test::run_cli(fmt::format(
            "run -p trn2-16 -t collective --set testbench.ranks={} --set workload.size=8MiB --set sim.timing={} -o {}",
            ranks, timing, out));
        EXPECT_EQ(r.exit_code, 0) << r.err;
        std::ifstream in(out);
        return nlohmann::json::parse(in)["results"]["time_us"].get<double>();
    };
    for (uint32_t ranks : {2u, 8u}) {
        double at = time_us("at", ranks), lt = time_us("lt", ranks);
        EXPECT_GE(lt / at, 0.95) << ranks << " ranks: AT " << at << " us, LT " << lt << " us";
        EXPECT_LE(lt / at, 1.7) << ranks << " ranks: AT " << at << " us, LT " << lt << " us";
    }
}
