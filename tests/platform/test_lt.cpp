// The loosely-timed mode (sim.timing: lt) against the AT mode it approximates: each case runs the
// CLI twice and holds the headline figure's relative error to the bound docs/performance.md states
// (1 % at the default quantum 0, measured <= 0.5 %; 5 % with a quantum), and shows LT's figure
// follows a platform parameter as AT's does (it comes from the resource models, not from a formula
// fixed at the AT value).
#include "tests/support.h"

#include <cmath>
#include <fmt/format.h>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <random>

using namespace nctlm;

namespace {

double figure(const std::string& args, const std::string& timing, const std::string& key) {
    std::string json = test::temp_file("", ".json");
    auto r = test::run_cli("run " + args + " --timing " + timing + " -q -o " + json);
    EXPECT_EQ(r.exit_code, 0) << args << " --timing " << timing << ": " << r.err;
    std::ifstream in(json);
    auto j = nlohmann::json::parse(in);
    return j["results"][key].get<double>();
}

void expect_close(const std::string& args, const std::string& key, double bound = 0.01) {
    double at = figure(args, "at", key), lt = figure(args, "lt", key);
    ASSERT_GT(at, 0) << args;
    EXPECT_LE(std::abs(lt - at) / at, bound) << args << ": " << key << " AT " << at << ", LT " << lt;
}

} // namespace

TEST(LooselyTimed, ProbeLatencyMatchesAt) {
    expect_close("-p trn1 -t probe", "latency_ns", 0.001);
    expect_close("-p trn2 -t probe --set testbench.target=remote", "latency_ns", 0.001);
}

TEST(LooselyTimed, StreamBandwidthWithinBound) {
    expect_close("-p tiny -t stream", "gb_per_s");
    expect_close("-p trn1 -t stream", "gb_per_s");
    expect_close("-p trn1 -t stream --set testbench.placement=interleaved", "gb_per_s");
}

TEST(LooselyTimed, ManyTilesOnSharedStacksWithinBound) {
    // Where tiles' streams meet at shared pseudo-channels their order sets row hits: a quantum
    // keeper per engine (each running ahead on its own) was +11.5 % here and +7.8 % on G1; the
    // global time order of DmaLtScheduler keeps them.
    expect_close("-p trn2 -t stream", "gb_per_s");
    expect_close("-p trn2 -t gqa -w gqa_g1_llama31_8b_8k", "sim_time_ns");
}

TEST(LooselyTimed, GemmEfficiencyWithinBound) {
    expect_close("-p trn1 -t gemm -w gemm_32x3072x32 --set workload.tiles=24", "efficiency");
}

TEST(LooselyTimed, TrafficThroughDmaWithinBound) {
    expect_close("-p trn1 -t traffic --set testbench.path=dma --set 'testbench.duration=20 us' "
                 "--set 'testbench.warmup=2 us'",
                 "bandwidth_gbs");
}

TEST(LooselyTimed, FollowsHbmBandwidthAsAtDoes) {
    // Half the pseudo-channel bandwidth (pipe model: no row-order effects): both modes lose about
    // half the stream bandwidth and still agree; an LT figure pinned to AT's default would not move.
    const std::string base = "-p trn1 -t stream --set testbench.bytes_per_tile=2MiB --set hbm.model=pipe";
    const std::string slow = base + " --set 'hbm.pc_bandwidth=12.8 GB/s'";
    double lt_fast = figure(base, "lt", "gb_per_s"), lt_slow = figure(slow, "lt", "gb_per_s");
    double at_fast = figure(base, "at", "gb_per_s"), at_slow = figure(slow, "at", "gb_per_s");
    EXPECT_LT(lt_slow, 0.7 * lt_fast) << "LT did not follow hbm.pc_bandwidth";
    EXPECT_LE(std::abs(lt_fast - at_fast) / at_fast, 0.05) << "AT " << at_fast << ", LT " << lt_fast;
    EXPECT_LE(std::abs(lt_slow - at_slow) / at_slow, 0.05) << "AT " << at_slow << ", LT " << lt_slow;
}

TEST(LooselyTimed, FollowsHbmModel) {
    // Banked and pipe give different figures under LT, as under AT.
    double banked = figure("-p trn1 -t stream --set testbench.bytes_per_tile=2MiB", "lt", "gb_per_s");
    double pipe = figure("-p trn1 -t stream --set testbench.bytes_per_tile=2MiB --set hbm.model=pipe", "lt", "gb_per_s");
    EXPECT_GT(std::abs(pipe - banked) / banked, 0.05) << "banked " << banked << ", pipe " << pipe;
}

TEST(LooselyTimed, B2bRefusesLtWithExit2) {
    auto r = test::run_cli("run -p trn1 -t b2b --timing lt");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("testbench 'b2b' measures how END_REQ"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("--timing at"), std::string::npos) << r.err;
}

TEST(LooselyTimed, ValidateTakesTimingAsRunDoes) {
    auto r = test::run_cli("validate -p tiny -t b2b --timing lt");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("--timing at"), std::string::npos) << r.err;
    r = test::run_cli("validate -p tiny --timing lt");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("timing: lt"), std::string::npos) << r.out;
}

TEST(LooselyTimed, TrafficHbmPathRefusesLtWithExit2) {
    auto r = test::run_cli("run -p trn1 -t traffic --timing lt");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("testbench.path=dma"), std::string::npos) << r.err;
}

TEST(LooselyTimed, BadTimingAndQuantumExit2) {
    auto r = test::run_cli("run -p trn1 -t probe --timing fast");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("--timing fast: expected at, lt or flow"), std::string::npos) << r.err;
    r = test::run_cli("run -p trn1 -t probe --set 'sim.quantum=5 GB/s'");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("sim.quantum"), std::string::npos) << r.err;
}

TEST(LooselyTimed, EffectiveConfigEchoesTheMode) {
    std::string json = test::temp_file("", ".json");
    auto r = test::run_cli("run -p trn1 -t probe --timing lt --set 'sim.quantum=200 ns' -q -o " + json);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::ifstream in(json);
    auto j = nlohmann::json::parse(in);
    EXPECT_EQ(j["config"]["sim"]["timing"], "lt");
    EXPECT_EQ(j["config"]["sim"]["quantum"], "200 ns");
}

TEST(LooselyTimed, PostedWritesAndScarceCreditsAsUnderAt) {
    // A posted write is acknowledged once in its PC's write queue, not when an ingress slot takes
    // it (LT was -65 % on this probe); a write waiting for a NoC credit is accepted and arrives no
    // earlier than it is injected (-12 %); with no ingress buffer LT crashed.
    expect_close("-p tiny -t probe --set testbench.write=true", "latency_ns", 0.001);
    expect_close("-p trn1 -t probe --set testbench.write=true --set dma.burst_size=512B", "latency_ns", 0.001);
    expect_close("-p trn1 -t probe --set testbench.write=true --set noc.port_buffer=1", "latency_ns", 0.001);
    expect_close("-p tiny -t probe --set hbm.ingress_queue=0", "latency_ns", 0.001);
    expect_close("-p trn1 -t stream --set hbm.ingress_queue=0", "gb_per_s");
}

TEST(LooselyTimed, AQuantumRunsAheadWithinTheLooserBound) {
    // Bursts may go up to a quantum past the kernel's next activity (a completion, an
    // instruction's end): faster, and no longer exact, on contended multi-tile cases.
    expect_close("-p trn2 -t stream --set 'sim.quantum=1 us'", "gb_per_s", 0.05);
    expect_close("-p trn2 -t gqa -w gqa_g1_llama31_8b_8k --set 'sim.quantum=1 us'", "sim_time_ns", 0.05);
}

namespace {
nlohmann::json stats_of(const std::string& args, const std::string& timing) {
    std::string json = test::temp_file("", ".json");
    auto r = test::run_cli("run " + args + " --timing " + timing + " -q -o " + json);
    EXPECT_EQ(r.exit_code, 0) << args << " --timing " << timing << ": " << r.err;
    std::ifstream in(json);
    return nlohmann::json::parse(in)["stats"]["top"];
}
// Sums one field of a queue statistic (0 where a histogram has no samples) over the NoC's stack ports or over every PC of every stack.
double noc_ports(const nlohmann::json& top, const std::string& field, const std::string& key) {
    double sum = 0;
    const nlohmann::json& noc = top.at("noc");
    for (auto it = noc.begin(); it != noc.end(); ++it)
        if (it.key().find("_port") != std::string::npos)
            sum += key.empty() ? it.value().at(field).get<double>() : it.value().at(field).value(key, 0.0);
    return sum;
}
double pc_queues(const nlohmann::json& top, const std::string& queue, const std::string& field, const std::string& key) {
    double sum = 0;
    for (auto hbm = top.begin(); hbm != top.end(); ++hbm)
        if (hbm.key().rfind("hbm", 0) == 0)
            for (auto pc = hbm.value().begin(); pc != hbm.value().end(); ++pc)
                if (pc.key().rfind("pc", 0) == 0 && pc.value().contains(queue)) {
                    const nlohmann::json& q = pc.value().at(queue).at(field);
                    sum += key.empty() ? q.get<double>() : q.value(key, 0.0);
                }
    return sum;
}
void expect_near_rel(double at, double lt, double bound, const std::string& what) {
    EXPECT_LE(std::abs(lt - at), bound * std::max(std::abs(at), 1.0)) << what << ": AT " << at << ", LT " << lt;
}
} // namespace

TEST(LooselyTimed, QueueStatisticsAsUnderAt) {
    // LT books each request's credit and PC-queue entries ahead of time; the statistics replay
    // those intervals in time order (level_sweep.h), so the NoC ports' and the PCs' occupancy an
    // arrival saw and the time they were full come out as under AT (they read 0 before).
    // The GEMM starts at t = 0 (no launch overhead), where the bound was measured: at a 9 us start
    // the refreshes fall elsewhere and the PC read queues' time full differs by 3.8 % (LT's replay
    // of refresh-blocked PCs; not yet understood).
    for (std::string args :
         {"-p trn2 -t stream", "-p trn1 -t gemm -w gemm_32x3072x32 --set workload.tiles=24 --set pe.launch_overhead=0ns"}) {
        nlohmann::json at = stats_of(args, "at"), lt = stats_of(args, "lt");
        ASSERT_GT(noc_ports(at, "occupancy", "count"), 0) << args;
        for (std::string key : {"count", "mean"})
            expect_near_rel(noc_ports(at, "occupancy", key), noc_ports(lt, "occupancy", key), 0.02,
                            args + ": NoC port occupancy " + key);
        for (std::string key : {"p90", "max"})  // the tail, summed over the ports: within one request
            EXPECT_NEAR(noc_ports(at, "occupancy", key), noc_ports(lt, "occupancy", key), 1.0)
                << args << ": NoC port occupancy " << key;
        expect_near_rel(noc_ports(at, "time_full_ns", ""), noc_ports(lt, "time_full_ns", ""), 0.02,
                        args + ": NoC port time full");
        ASSERT_GT(pc_queues(at, "read_queue", "occupancy", "count"), 0) << args;
        expect_near_rel(pc_queues(at, "read_queue", "occupancy", "count"), pc_queues(lt, "read_queue", "occupancy", "count"),
                        0.0, args + ": PC read-queue samples");
        expect_near_rel(pc_queues(at, "read_queue", "time_full_ns", ""), pc_queues(lt, "read_queue", "time_full_ns", ""),
                        0.02, args + ": PC read queues' time full");
    }
}

TEST(LooselyTimed, UnalignedWritesWaitForQueueEntriesAsUnderAt) {
    // An unaligned write's short last burst (100 B: 4 column entries) behind whole 1 KiB bursts (32
    // entries each) in a PC's write queue: AT admits it once its entries fit, so it waits for a
    // whole burst to leave; LT used to count requests of its own size and acknowledged it at once
    // (tiny: 447 -> 401 ns, issue 24). Exact now; held on the case and on random variants.
    const double bound = 0.005;
    expect_close("-p tiny -t probe --set testbench.write=true --set testbench.offset=100B --set testbench.bytes=32KiB",
                 "latency_ns", bound);
    std::mt19937 rng(24);
    const char* platforms[] = {"tiny", "trn1", "trn2"};
    const char* offsets[] = {"32B", "100B", "1000B", "65600B"};
    const char* sizes[] = {"8KiB", "32KiB", "96KiB", "256KiB"};
    for (int i = 0; i < 3; ++i) {
        std::string args = fmt::format("-p {} -t probe --set testbench.write=true --set testbench.offset={} "
                                       "--set testbench.bytes={}",
                                       platforms[rng() % 3], offsets[rng() % 4], sizes[rng() % 4]);
        expect_close(args, "latency_ns", bound);
    }
}
