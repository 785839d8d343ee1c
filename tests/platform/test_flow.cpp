// The flow mode (sim.timing: flow; models/flow): its pseudo-channel table is the banked model's
// (the calibration driver equals the AT controller on one PC; the shipped tables equal a fresh
// calibration), a changed hbm section makes and caches a new table, lone transfers match AT, the
// refusals, the figures follow the platform, and what it costs per descriptor. Its error against
// AT over the whole corpus is held by the differential corpus (scripts/mode-error --ci --check,
// ctest mode_error_ci_corpus).
#include "models/common/sim.h"
#include "models/flow/flow_table.h"
#include "models/flow/pc_calibration.h"
#include "platforms/platform_config.h"
#include "platforms/shipped_configs.h"
#include "tests/support.h"

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using namespace nctlm;

namespace {

nlohmann::json run_json(const std::string& args) {
    std::string json = test::temp_file("", ".json");
    auto r = test::run_cli("run " + args + " -q -o " + json);
    EXPECT_EQ(r.exit_code, 0) << args << ": " << r.err;
    std::ifstream in(json);
    return nlohmann::json::parse(in);
}

double figure(const std::string& args, const std::string& timing, const std::string& key) {
    return run_json(args + " --timing " + timing)["results"][key].get<double>();
}

} // namespace

// The driver (models/flow/pc_calibration.cpp) against the AT controller: the traffic testbench
// on one stack with every request on one PC (plain PC map, a stride of a whole PC period).
TEST(PcCalibration, EqualsTheAtControllerOnOnePc) {
    HbmConfig h = test::load_platform("trn1", {"hbm.pc_hash=none"}).hbm;
    for (uint32_t window : {1u, 2u, 16u})
        for (double reads : {1.0, 0.5, 0.0}) {
            flow::PcLoad l;
            l.request_bytes = 2048;
            l.window = window;
            l.read_fraction = reads;
            const double driver = flow::measure_pc(h, l).bandwidth;
            auto j = run_json(fmt::format("-p trn1 -t traffic --set hbm.pc_hash=none --set testbench.pattern=strided "
                                          "--set testbench.stride=32KiB --set testbench.request_bytes=2KiB "
                                          "--set testbench.window={} --set testbench.read_fraction={}",
                                          window, reads));
            const double at = j["results"]["bandwidth_gbs"].get<double>();
            EXPECT_NEAR(driver, at, 0.01 * at) << "window " << window << ", read fraction " << reads;
        }
}

TEST(FlowTable, ShippedTablesAreWhatTheBankedModelGivesNow) {
    for (const char* name : {"tiny", "trn1", "trn2"}) {
        std::ifstream in(test::source_path(std::string("configs/flow/") + name + ".json"));
        ASSERT_TRUE(in) << name;
        auto shipped = nlohmann::json::parse(in);
        auto fresh = flow::FlowTable::calibrate(test::load_platform(name).hbm).to_json();
        EXPECT_EQ(shipped["hbm_hash"], fresh["hbm_hash"]) << name << ": the platform's hbm section changed; run "
                                                          << "nctlm calibrate flow -p " << name << " -o configs/flow/"
                                                          << name << ".json";
        EXPECT_EQ(shipped.dump(), nlohmann::json::parse(fresh.dump(1)).dump())
            << name << ": the banked model gives another table now; regenerate it (nctlm calibrate flow)";
        EXPECT_NE(shipped["provenance"].get<std::string>().find("derived from the banked model"), std::string::npos);
    }
}

// Sequential streams sharing one PC (tiles streaming through it at once): one stream is the
// sustained rate itself; two streams of the trn2 table lose rate to rows the other closed (the
// mechanism behind the flow mode's GQA and multi-tile stream errors before it, docs/performance.md);
// between the measured counts the fraction is interpolated in log2(streams).
TEST(FlowTable, StreamsSharingAPcComeFromTheBankedModel) {
    const HbmConfig h = test::load_platform("trn2").hbm;
    const auto t = flow::FlowTable::calibrate(h);
    EXPECT_DOUBLE_EQ(t.shared_fraction(2048, false, 1, true), 1.0);
    flow::PcLoad l;
    l.request_bytes = 2048;
    l.window = flow::FlowTable::kWindows.back();
    const double one = flow::measure_pc(h, l).bandwidth;
    l.streams = 2;
    const double two = flow::measure_pc(h, l).bandwidth;
    EXPECT_LT(two, 0.95 * one);  // the banked model: two streams reopen each other's rows
    EXPECT_NEAR(t.shared_fraction(2048, false, 2, true), two / one, 1e-12);
    const double f2 = t.shared_fraction(2048, false, 2, true), f4 = t.shared_fraction(2048, false, 4, true);
    const double a = std::log2(3.0) - 1;
    EXPECT_NEAR(t.shared_fraction(2048, false, 3, true), (1 - a) * f2 + a * f4, 1e-12);
    EXPECT_DOUBLE_EQ(t.shared_fraction(2048, false, 64, true), t.shared_fraction(2048, false, 8, true));
    // The pipe model has no rows: streams share it without loss.
    const auto pipe = flow::FlowTable::calibrate(test::load_platform("trn2", {"hbm.model=pipe"}).hbm);
    EXPECT_DOUBLE_EQ(pipe.shared_fraction(2048, false, 2, true), 1.0);
}

TEST(FlowTable, ChangedTimingsMakeANewTableThatIsCachedAndUsed) {
    const std::string cache = test::temp_file("", "") + ".d";
    setenv("NCTLM_CACHE_DIR", cache.c_str(), 1);  // the CLI below inherits it
    auto first = run_json("-p trn1 -t probe --timing flow --set 'hbm.t_rcd=20 ns'");
    auto second = run_json("-p trn1 -t probe --timing flow --set 'hbm.t_rcd=20 ns'");
    auto shipped = run_json("-p trn1 -t probe --timing flow");
    unsetenv("NCTLM_CACHE_DIR");
    const std::string hash = flow::hbm_hash(test::load_platform("trn1", {"hbm.t_rcd=20 ns"}).hbm);
    EXPECT_NE(first["sim"]["flow"]["table"].get<std::string>().find("calibrated now (cached in"), std::string::npos)
        << first["sim"]["flow"]["table"];
    EXPECT_EQ(second["sim"]["flow"]["table"].get<std::string>(), cache + "/flow-" + hash + ".json");
    EXPECT_NE(shipped["sim"]["flow"]["table"].get<std::string>().find("configs/flow/trn1.json"), std::string::npos);
    // A longer tRCD: the probe is slower under flow as under AT (the table follows the timings).
    EXPECT_GT(first["results"]["latency_ns"].get<double>(), shipped["results"]["latency_ns"].get<double>() + 4);
    std::filesystem::remove_all(cache);
}

TEST(FlowMode, LoneTransfersMatchAt) {
    for (const char* platform : {"tiny", "trn1", "trn2"})
        for (const char* extra : {"", " --set testbench.target=remote", " --set testbench.bytes=2KiB",
                                  " --set testbench.bytes=1MiB"}) {
            const std::string args = std::string("-p ") + platform + " -t probe" + extra;
            double at = figure(args, "at", "latency_ns"), flow = figure(args, "flow", "latency_ns");
            EXPECT_NEAR(flow, at, 0.01 * at) << args;
        }
}

TEST(FlowMode, FollowsHbmBandwidthAsAtDoes) {
    const std::string base = "-p trn1 -t stream --set testbench.bytes_per_tile=2MiB --set hbm.model=pipe";
    const std::string slow = base + " --set 'hbm.pc_bandwidth=12.8 GB/s'";
    double flow_fast = figure(base, "flow", "gb_per_s"), flow_slow = figure(slow, "flow", "gb_per_s");
    double at_fast = figure(base, "at", "gb_per_s"), at_slow = figure(slow, "at", "gb_per_s");
    EXPECT_LT(flow_slow, 0.7 * flow_fast) << "flow did not follow hbm.pc_bandwidth";
    EXPECT_NEAR(flow_fast, at_fast, 0.05 * at_fast);
    EXPECT_NEAR(flow_slow, at_slow, 0.05 * at_slow);
}

namespace {
// `args` exits 2 and its message holds `why`.
void expect_refused(const std::string& args, const std::string& why) {
    test::CliResult r = test::run_cli(args);
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_NE(r.err.find(why), std::string::npos) << args << ": " << r.err;
}
} // namespace

// Several chips: each NeuronLink direction is a flow resource. The usage weights carry exactly the
// bytes AT's wire does (data, link.request_bytes per read request and write acknowledgement). Two
// chips writing to each other share each direction between one's data and the other's
// acknowledgements: with those marked as header usage the default oldest-first sharing no longer
// runs the chips' transfers one after the other (+90 % trn1-16, +63 % trn2-16 before): a 2-rank
// 8 MiB all_reduce is within 5 % of AT (measured +3.1 %, -3.3 %), fair sharing within 10 % (+7.9 %,
// +0.6 %); off the defaults (sizes, link bandwidth and header size, bursts, latency) within 15 %
// (measured -11.2 ... +13.2 %; docs/performance.md, "Flow over chips").
TEST(FlowMode, CrossesChipsOverNeuronLinkDirections) {
    for (std::string p : {"trn1-16", "trn2-16"}) {
        const std::string args = "-p " + p + " -t collective --set testbench.ranks=2 --set workload.size=8MiB";
        auto at = run_json(args + " --timing at")["results"];
        auto flow = run_json(args + " --timing flow")["results"];
        auto fair = run_json(args + " --timing flow --set sim.flow_sharing=fair")["results"];
        ASSERT_EQ(at["links"].size(), 2u) << p;
        ASSERT_EQ(flow["links"].size(), at["links"].size()) << p;
        for (auto& [name, l] : at["links"].items())
            EXPECT_NEAR(flow["links"][name]["bytes"].get<double>(), l["bytes"].get<double>(), 1.0) << p << " " << name;
        const double t_at = at["time_us"].get<double>(), t_flow = flow["time_us"].get<double>();
        EXPECT_NEAR(t_flow, t_at, 0.05 * t_at) << p;
        EXPECT_NEAR(fair["time_us"].get<double>(), t_at, 0.10 * t_at) << p;
        // A longer link adds its latency to every crossing descriptor: the figure moves with it.
        auto slow = run_json(args + " --timing flow --set link.latency=20us")["results"];
        EXPECT_GT(slow["time_us"].get<double>(), t_flow + 20.0) << p;
    }
    for (std::string v : {"-p trn1-16 --set workload.size=2MiB --set link.request_bytes=256B",
                          "-p trn2-16 --set workload.size=4MiB --set link.bandwidth=64GB/s",
                          "-p trn1-16 --set workload.size=8MiB --set dma.burst_size=1KiB",
                          "-p trn2-16 --set workload.size=16MiB --set link.latency=500ns"}) {
        const std::string args = v + " -t collective --set testbench.ranks=2";
        const double t_at = run_json(args + " --timing at")["results"]["time_us"].get<double>();
        EXPECT_NEAR(run_json(args + " --timing flow")["results"]["time_us"].get<double>(), t_at, 0.15 * t_at) << v;
    }
}

TEST(FlowMode, RefusesWhatItDoesNotModelWithExit2) {
    expect_refused("run -p trn1 -t b2b --timing flow", "flow mode does not model");
    expect_refused("run -p trn1 -t traffic --timing flow", "does not run under sim.timing: flow");
    test::CliResult r = test::run_cli("validate -p tiny --timing flow");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    // Beyond 5 % of AT, or a mechanism the flow leaves out: graphs whose ranks share a stack, posted
    // writes, a window of requests through credits and queues, ports with few credits
    // (docs/performance.md, "What flow refuses"). mlp_tp2 on trn2 puts cores 0 and 1 in stack 0.
    expect_refused("run -p trn2 -t graph -w mlp_tp2 --timing flow", "when two ranks' tensors share an HBM stack");
    expect_refused("run -p trn1 -t probe --set testbench.write=true --timing flow",
                   "a write probe does not run under sim.timing: flow");
    expect_refused("run -p trn2 -t traffic --set testbench.path=dma --timing flow",
                   "testbench 'traffic' does not run under sim.timing: flow");
    expect_refused("run -p tiny -t stream --set noc.port_buffer=8 --timing flow", "does not model the NoC's credits");
    r = test::run_cli("run -p tiny -t stream --set noc.port_buffer=9 --timing flow -q");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    // No ingress buffer: head-of-line blocking at the controller's port bounds AT (a remote trn2
    // stream of 1 KiB bursts: AT 870 GB/s with ingress_queue 0, 1495 with 8, flow 1458).
    expect_refused("run -p trn2 -t stream --set hbm.ingress_queue=0 --timing flow",
                   "does not model the controller's head-of-line blocking");
    r = test::run_cli("run -p tiny -t stream --set hbm.ingress_queue=1 --timing flow -q");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    // A collective on one chip runs (within 5 % of AT in the corpus).
    r = test::run_cli("run -p trn2 -t collective -w collective_allr_r2_32mb --set workload.size=1MiB --timing flow");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    expect_refused("run -p trn1 -t probe --timing fast", "expected at, lt or flow");
}

// A graph whose ranks each have a stack of their own runs under flow within 5 % of AT, on the
// defaults and off them (measured: mlp_tp2 trn1 -0.2 %, trn2 on cores 0 and 2 +0.4 %; with
// dma.burst_size 1 KiB +1.9 % / +1.6 %, with closed pages -0.1 % / +0.0 %); on one stack it is
// refused (above).
TEST(FlowMode, RunsGraphsWhoseRanksHaveAStackEachWithinFivePercentOfAt) {
    std::ifstream in(test::source_path("configs/graphs/mlp_tp2.json"));
    nlohmann::json g = nlohmann::json::parse(in);
    g["placement"] = {{"tp", 2}, {"cores", {0, 2}}};
    const std::string file = test::temp_file("", ".json");
    std::ofstream(file) << g.dump();
    for (const std::string& graph : {std::string("-p trn1 -t graph -w mlp_tp2"), "-p trn2 -t graph -w " + file})
        for (const std::string sets : {"", " --set dma.burst_size=1KiB", " --set hbm.page_policy=closed"}) {
            const std::string args = graph + sets;
            const double at = figure(args, "at", "latency_ns"), flow = figure(args, "flow", "latency_ns");
            EXPECT_NEAR(flow, at, 0.05 * at) << args;
        }
}

TEST(FlowMode, ReportsItsEventsPerDescriptor) {
    auto j = run_json("-p trn1 -t stream --timing flow");
    const auto& f = j["sim"]["flow"];
    EXPECT_GT(f["descriptors"].get<double>(), 500);
    EXPECT_LE(f["kernel_events_per_descriptor"].get<double>(), 3);
    EXPECT_GT(f["kernel_events_per_descriptor"].get<double>(), 0);
    EXPECT_LE(f["solver_events_per_descriptor"].get<double>(), 3);
}

// Issue 24: at most 3 events per descriptor whatever its size (a descriptor is one flow per stack,
// not its bursts), for the PE's DMA jobs and kernel programs as for testbenches. A descriptor whose
// bytes interleave over S stacks is S flows and costs up to 3 per stack: the target is missed there
// (trn2, 4 stacks: 6.2 kernel and 8.0 solver events per descriptor; docs/performance.md).
TEST(FlowMode, EventsPerDescriptorStayWithinThreeAtEverySizeAndWorkload) {
    struct Case {
        const char* args;
        double stacks;  // the stacks each descriptor's bytes reach
    };
    for (const Case& c : {Case{"-p trn1 -t stream --set testbench.descriptor_bytes=2KiB --set testbench.bytes_per_tile=4MiB", 1},
                          Case{"-p trn1 -t stream --set testbench.descriptor_bytes=256KiB --set testbench.bytes_per_tile=16MiB", 1},
                          Case{"-p trn2 -t gqa -w gqa_g1_llama31_8b_8k", 1}, Case{"-p trn1 -t kernel -w add", 1},
                          Case{"-p trn2 -t stream --set testbench.placement=interleaved --set testbench.descriptor_bytes=64KiB", 4}}) {
        const auto f = run_json(std::string(c.args) + " --timing flow")["sim"]["flow"];
        EXPECT_GT(f["descriptors"].get<double>(), 15) << c.args;
        EXPECT_LE(f["kernel_events_per_descriptor"].get<double>(), 3 * c.stacks) << c.args;
        EXPECT_LE(f["solver_events_per_descriptor"].get<double>(), 3 * c.stacks) << c.args;
        if (c.stacks > 1) {  // the per-stack cost is what it is, not a bound met by accident
            EXPECT_GT(f["solver_events_per_descriptor"].get<double>(), 3) << c.args;
        }
    }
}
