// Hostile input at `nctlm run` (issue 23): every reproducer of the issue, named after its input,
// with the exit status (2: refused before simulating; 3: a simulation error) and the message at
// the right place (file:line:col or the --set that caused it), a did-you-mean where one helps.
#include "tests/sweep/sweep_test_util.h"

#include <gtest/gtest.h>

using namespace nctlm::test;
namespace fs = std::filesystem;

namespace {
#define EXPECT_HAS(text, part) EXPECT_NE((text).find(part), std::string::npos) << (text)
#define EXPECT_STARTS(text, part) EXPECT_EQ((text).rfind(part, 0), 0u) << (text)

std::string tiny() { return platform("tiny"); }

// A 2 us traffic run, as the hang reproducers used.
std::string traffic_2us() {
    return "run -p " + tiny() + " -t traffic --set 'testbench.duration=2 us' --set 'testbench.warmup=1 us' -q";
}

// The platform file with one line changed, for reproducers that need a file.
std::string tiny_with(const std::string& from, const std::string& to) {
    std::string text = read_file(tiny());
    auto at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
    return temp_file(text);
}
} // namespace

// ---- hangs -----------------------------------------------------------------------------------

TEST(HostileRun, HbmTimings9000sOnA2usTrafficRunRefusedByRangeExit2) {
    for (const char* key : {"t_rc", "t_cl", "t_cwl", "t_rrd_l", "t_faw", "t_wtr_s", "t_wtr_l", "t_rtw", "t_wr", "t_rtp",
                            "front_end_latency"}) {
        auto r = run_cli(traffic_2us() + " --set 'hbm." + std::string(key) + "=9000 s'");
        EXPECT_EQ(r.exit_code, 2) << key << ": " << r.err;
        EXPECT_STARTS(r.err, "--set hbm." + std::string(key) + "=9000 s: key 'hbm." + key + "': 9000000 ms is out of "
                             "range [0 s .. 10 us]");
    }
}

TEST(HostileRun, PcBandwidth1BpsRefusedBelow1GBpsExit2) {
    auto r = run_cli(traffic_2us() + " --set 'hbm.pc_bandwidth=1 B/s'");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_STARTS(r.err, "--set hbm.pc_bandwidth=1 B/s: key 'hbm.pc_bandwidth': 0 GB/s is below the plausible minimum "
                         "1 GB/s");
}

// What no range catches (a NoC link at 1 B/s) stops at the run's time limit instead of running on.
TEST(HostileRun, LinkBandwidth1BpsStopsAtTheTimeLimitExit3) {
    auto r = run_cli(traffic_2us() + " --set testbench.path=dma --set 'noc.link_bandwidth=1 B/s'");
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_HAS(r.err, "error: simulated time passed the run's limit of 1000 ms with work still pending");
    EXPECT_HAS(r.err, "raise sim.time_limit");
}

TEST(HostileRun, TimeLimitIsASettingAndTenTimesATestbenchsOwnDuration) {
    auto r = run_cli("run -p " + tiny() + " -t b2b -q --set 'sim.time_limit=100 ns'");
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_HAS(r.err, "passed the run's limit of 100 ns");
    // traffic runs 2 us: a 100 ns limit is raised to 20 us for it.
    EXPECT_EQ(run_cli(traffic_2us() + " --set 'sim.time_limit=100 ns'").exit_code, 0);
}

// Quadratic before (a vector's find-and-erase per completion): 2^20 did not finish in 400 s. The
// test binary's ctest timeout is the bound.
TEST(HostileRun, TrafficWindow2To20ThroughTheDmaFinishes) {
    auto r = run_cli(traffic_2us() + " --set testbench.path=dma --set testbench.window=1048576");
    EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST(HostileRun, MaxMemoryCountsTheTrafficWindow) {
    // 2 tiles x 262144 outstanding requests: about 170 MiB of records (measured 186 MB RSS).
    auto r = run_cli("run -p " + tiny() + " -t traffic --set testbench.path=dma --set testbench.window=262144 "
                     "--max-memory 100MiB");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_HAS(r.err, "--max-memory 100 MiB: this run needs about 234 MiB (testbench 170 MiB");
}

// ---- silent wrong answers ----------------------------------------------------------------------

TEST(HostileRun, BitListsBeyondTheStacksOffsetBitsExit2) {
    // tiny: 1 GiB stacks, offset bits 0..29.
    struct Case {
        const char* set;
        const char* message;
    } cases[] = {
        {"hbm.bank_bits=62-63", "hbm.bank_bits uses bit 62, beyond the stack's 30 offset bits (0..29"},
        {"hbm.column_bits=26-30", "hbm.column_bits uses bit 30, beyond the stack's 30 offset bits"},
        {"hbm.bank_group_bits=31,32", "hbm.bank_group_bits uses bit 31, beyond the stack's 30 offset bits"},
        {"hbm.column_bits=30-31", "hbm.column_bits uses bit 30, beyond the stack's 30 offset bits"},
        {"hbm.bank_group_bits=40-44", "hbm.bank_group_bits uses bit 40, beyond the stack's 30 offset bits"},
    };
    for (auto& c : cases) {
        auto r = run_cli("run -p " + tiny() + " -t probe --set " + c.set);
        EXPECT_EQ(r.exit_code, 2) << c.set << ": " << r.err;
        EXPECT_STARTS(r.err, "--set " + std::string(c.set) + ": ");
        EXPECT_HAS(r.err, c.message);
    }
}

TEST(HostileRun, GemmCores4294967297IsNotTruncatedTo1Exit2) {
    auto r = run_cli("run -p trn1 -t gemm -w gemm_4096x4096x4096_bf16 --set workload.cores=4294967297 -q");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_STARTS(r.err, "--set workload.cores=4294967297: workload.cores=4294967297 but the platform has 2 "
                         "NeuronCores (use 1..2 or all)");
}

TEST(HostileRun, YamlNullIsRefusedNotTheDefaultExit2) {
    std::string file = tiny_with("hbm:\n", "hbm:\n  t_rc:\n");
    auto r = run_cli("run -p " + file + " -t probe");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_HAS(r.err, file + ":");
    EXPECT_HAS(r.err, "key 'hbm.t_rc' has no value (YAML null); give one (");
    EXPECT_HAS(r.err, "or remove the line for the default (48.75 ns)");
}

TEST(HostileRun, Seed2To63IsCheckedInIntegersExit2) {
    auto r = run_cli(traffic_2us() + " --set testbench.seed=9223372036854775808");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_STARTS(r.err, "--set testbench.seed=9223372036854775808: key 'testbench.seed': 9223372036854775808 is out "
                         "of range [0 .. 9223372036854775807]");
    EXPECT_EQ(run_cli(traffic_2us() + " --set testbench.seed=9223372036854775807").exit_code, 0);
}

TEST(HostileRun, MaxMemoryEmptyIsAnErrorNotTheDefaultExit2) {
    auto r = run_cli("run -p " + tiny() + " -t probe --max-memory ''");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_STARTS(r.err, "--max-memory '': '' is not a size");
}

// ---- mislocated ----------------------------------------------------------------------------------

TEST(HostileRun, CrossFieldErrorsFromASetAreLocatedAtTheSet) {
    struct Case {
        const char* set;
        const char* message;
    } cases[] = {
        {"hbm.t_rcd=40 ns", "hbm.t_ras (34 ns) is shorter than hbm.t_rcd (40 ns)"},
        {"hbm.t_ras=60 ns", "hbm.t_rc must be at least hbm.t_ras"},
        {"hbm.t_ccd_s=3 ns", "hbm.t_ccd_l must be at least hbm.t_ccd_s"},
        {"hbm.t_rrd_s=8 ns", "hbm.t_rrd_l must be at least hbm.t_rrd_s"},
        {"hbm.t_refi=200 ns", "hbm.t_rfc must be shorter than hbm.t_refi"},
        {"hbm.write_queue=16", "hbm.write_high cannot exceed hbm.write_queue"},
        {"hbm.interleave=64 B", "must divide hbm.interleave"},
        {"dma.queue_channels=64", "dma.queue_channels cannot exceed dma.channels"},
    };
    for (auto& c : cases) {
        auto r = run_cli("run -p " + tiny() + " -t probe --set '" + c.set + "'");
        EXPECT_EQ(r.exit_code, 2) << c.set << ": " << r.err;
        EXPECT_STARTS(r.err, "--set " + std::string(c.set) + ": ");
        EXPECT_HAS(r.err, c.message);
    }
    // The same check with the platform file's own value is still located in the file.
    std::string file = tiny_with("hbm:\n", "hbm:\n  t_ras: 10 ns\n");
    auto r = run_cli("run -p " + file + " -t probe");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_STARTS(r.err, file + ":");
}

TEST(HostileRun, Rcd9000000msIsOutOfRangeAtTheSet) {
    auto r = run_cli("run -p " + tiny() + " -t probe --set 'hbm.t_rcd=9000000 ms'");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_STARTS(r.err, "--set hbm.t_rcd=9000000 ms: key 'hbm.t_rcd': 9000000 ms is out of range");
}

TEST(HostileRun, SectionTypoIsLocatedWithADidYouMean) {
    std::string file = tiny_with("hbm:", "hmb:");
    auto r = run_cli("run -p " + file + " -t probe");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_HAS(r.err, file + ":");
    EXPECT_HAS(r.err, ": unknown section 'hmb'; did you mean 'hbm'?");
}

TEST(HostileRun, SetSectionTypoSuggestsHbmNotDma) {
    auto r = run_cli("run -p " + tiny() + " -t probe --set hmb.stacks=2");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_STARTS(r.err, "--set hmb.stacks=2: unknown section 'hmb'; did you mean 'hbm'?");
}

TEST(HostileRun, UnknownShippedPlatformListsTheShippedOnes) {
    auto r = run_cli("run -p trn3 -t probe");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_STARTS(r.err, "trn3: no such file, and no shipped platform of that name (shipped: tiny, trn1, trn1-16, trn2, trn2-16); did "
                         "you mean 'trn1'?");
    auto w = run_cli("run -p trn1 -t gemm -w gemm_32x3072x33");
    EXPECT_EQ(w.exit_code, 2) << w.err;
    EXPECT_HAS(w.err, "no shipped workload of that name");
    EXPECT_HAS(w.err, "did you mean 'gemm_32x3072x32'?");
}

// ---- silently ignored ----------------------------------------------------------------------------

TEST(HostileRun, WorkloadForATestbenchThatReadsNoneIsRefused) {
    auto r = run_cli("run -p " + tiny() + " -t probe -w gemm_32x3072x32");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_HAS(r.err, "gemm_32x3072x32.yaml:");
    EXPECT_HAS(r.err, "testbench 'probe' reads no 'workload' keys, so workload.* would be ignored");
}

TEST(HostileRun, SetWorkloadKeyOnProbeIsRefusedAtTheSet) {
    auto r = run_cli("run -p " + tiny() + " -t probe --set workload.m=5");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_STARTS(r.err, "--set workload.m=5: testbench 'probe' reads no 'workload' keys");
}

TEST(HostileRun, PipeOnlyKeyUnderTheBankedModelIsWarned) {
    auto r = run_cli("run -p " + tiny() + " -t probe --set 'hbm.controller_latency=50 ns'");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_HAS(r.err, "warning: --set hbm.controller_latency=50 ns: hbm.model is banked, which does not read "
                      "hbm.controller_latency; ignored");
    auto pipe = run_cli("run -p " + tiny() + " -t probe --set hbm.model=pipe --set 'hbm.t_rcd=20 ns'");
    EXPECT_EQ(pipe.exit_code, 0) << pipe.err;
    EXPECT_HAS(pipe.err, "hbm.model is pipe, which does not read hbm.t_rcd");
    EXPECT_EQ(run_cli("run -p " + tiny() + " -t probe --set hbm.model=pipe --set 'hbm.controller_latency=50 ns'").err,
              "");
}

TEST(HostileRun, KBIsRefusedWithAHintAndkBIsSI) {
    auto r = run_cli("run -p " + tiny() + " -t probe --set testbench.bytes=4KB");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_HAS(r.err, "'4KB': 'KB' is ambiguous; write KiB for 1024 B or kB for 1000 B");
    auto si = run_cli("run -p " + tiny() + " -t probe --set 'testbench.bytes=4 kB'");
    EXPECT_EQ(si.exit_code, 0) << si.err;
    EXPECT_HAS(si.out, "read 4000 B");
}

TEST(HostileRun, GbpsIsAcceptedAsBits) {
    auto bits = run_cli("run -p " + tiny() + " -t probe --set 'hbm.pc_bandwidth=204.8 Gb/s'");
    auto bytes = run_cli("run -p " + tiny() + " -t probe --set 'hbm.pc_bandwidth=25.6 GB/s'");
    EXPECT_EQ(bits.exit_code, 0) << bits.err;
    EXPECT_EQ(bits.out, bytes.out);
}

// ---- outputs a program can read -----------------------------------------------------------------

TEST(HostileRun, StatsJsonDashIsStdout) {
    std::string dir = temp_dir();
    auto r = run_shell("cd " + dir + " && " + NCTLM_BIN + " run -p " + tiny() + " -t probe --stats-json -");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_FALSE(fs::exists(dir + "/-"));
    auto j = nlohmann::json::parse(r.out);  // stdout is one JSON document
    EXPECT_GT(j["results"]["latency_ns"].get<double>(), 0);
    EXPECT_HAS(r.err, "probe: read 32768 B");  // the summary went to stderr
    fs::remove_all(dir);
}

TEST(HostileRun, ReplayRerunsAStatsJsonAndPlatformAsAStatsJsonHints) {
    std::string json = temp_file("", ".json");
    auto first = run_cli("run -p " + tiny() + " -t gemm -w gemm_32x3072x32 --set workload.tiles=3 "
                         "--set dma.channels=2 -q -o " + json);
    ASSERT_EQ(first.exit_code, 0) << first.err;
    std::string again = temp_file("", ".json");
    auto r = run_cli("run --replay " + json + " -q -o " + again);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto a = nlohmann::json::parse(read_file(json)), b = nlohmann::json::parse(read_file(again));
    EXPECT_EQ(a["results"], b["results"]);
    EXPECT_EQ(a["config"], b["config"]);
    auto hint = run_cli("run -p " + json + " -t gemm");
    EXPECT_EQ(hint.exit_code, 2) << hint.err;
    EXPECT_HAS(hint.err, "a stats JSON of `nctlm run`, not a platform; replay it with `nctlm run --replay");
    auto other = run_cli("run --replay " + json + " -t probe");
    EXPECT_EQ(other.exit_code, 2);
    EXPECT_HAS(other.err, "that run was testbench 'gemm', not 'probe'");
}

// A kernel run replays too: its program file and its kernel.NAME arguments are in the stats JSON,
// so --replay needs no -w and runs the same program with the same arguments, from any directory.
TEST(HostileRun, ReplayOfAKernelRunRunsItsProgramWithItsArguments) {
    std::string json = temp_file("", ".json");
    auto first = run_cli("run -p " + tiny() + " -t kernel -w add --set kernel.ROWS=256 --set kernel.COLS=512 -q -o " +
                         json);
    ASSERT_EQ(first.exit_code, 0) << first.err;
    auto a = nlohmann::json::parse(read_file(json));
    ASSERT_TRUE(a.contains("program")) << a.dump().substr(0, 200);
    EXPECT_TRUE(fs::path(a["program"].get<std::string>()).is_absolute());
    EXPECT_EQ(a["config"]["kernel"]["ROWS"], 256);
    std::string again = temp_file("", ".json");
    auto r = run_shell("cd / && " + std::string(NCTLM_BIN) + " run --replay " + json + " -q -o " + again);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto b = nlohmann::json::parse(read_file(again));
    EXPECT_EQ(a["results"], b["results"]);
    EXPECT_EQ(a["program"], b["program"]);
    // The default arguments give a different run: the replay did set them again.
    std::string defaults = temp_file("", ".json");
    ASSERT_EQ(run_cli("run -p " + tiny() + " -t kernel -w add -q -o " + defaults).exit_code, 0);
    EXPECT_NE(nlohmann::json::parse(read_file(defaults))["results"]["sim_time_ns"], b["results"]["sim_time_ns"]);
}

TEST(HostileRun, SimulatedAndHostTimeAreNamedApartWithTheOldNamesAsAliases) {
    std::string json = temp_file("", ".json");
    ASSERT_EQ(run_cli("run -p " + tiny() + " -t b2b -q -o " + json).exit_code, 0);
    auto j = nlohmann::json::parse(read_file(json));
    EXPECT_GT(j["results"]["sim_time_ns"].get<double>(), 0);
    EXPECT_EQ(j["results"]["wall_ns"], j["results"]["sim_time_ns"]);  // 0.2's name, one release
    EXPECT_EQ(j["sim"]["sim_time_ns"], j["sim"]["simulated_ns"]);
    EXPECT_EQ(j["sim"]["host_time_s"], j["sim"]["wall_s"]);
}
