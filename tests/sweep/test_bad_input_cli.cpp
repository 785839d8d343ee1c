// Bad input at the command line (issue 12): each reproducer, named after the input, gets the
// right exit status (2 bad input, 3 simulation error) and a message naming what to fix.
#include "tests/sweep/sweep_test_util.h"

#include <fstream>
#include <gtest/gtest.h>
#include <iterator>

using namespace nctlm::test;
namespace fs = std::filesystem;

namespace {
#define EXPECT_HAS(text, part) EXPECT_NE((text).find(part), std::string::npos) << (text)

std::string tiny() { return platform("tiny"); }
std::string trn1() { return platform("trn1"); }

std::string small_spec(const std::string& dir, const std::string& extra = "") {
    std::string spec = dir + "/spec.yaml";
    write_file(spec, "name: small\nplatform: " + tiny() + "\ntestbench: probe\n" + extra +
                         "grid:\n  testbench.bytes: [1 KiB, 2 KiB]\n");
    return spec;
}
} // namespace

// ---- simulated time beyond the kernel's range: exit 3 with the figure, no result --------------

// (The n=65536 x 800 kernels is now refused earlier, exit 2: no tile of that shape fits the
// PE, and the kernels run on the simulated chip. A 10^13 ns submission overflows the same way.)
TEST(BadInputCli, HostSubmissionCost1e13nsOverflowsTimeExit3) {
    auto r = run_cli("run -t host -p " + trn1() + " -w " + source_path("configs/workloads/host_matmul_512.yaml") +
                     " --set 'host.submission_cost=1e13 ns' --set workload.kernels=800");
    EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
    EXPECT_HAS(r.err, "simulated time overflow");
    EXPECT_EQ(r.out, "") << "a failed run prints no figure";
}

TEST(BadInputCli, ControllerLatency1e15nsOverflowsTimeExit3) {
    // controller_latency is the pipe model's (the banked model uses the DRAM timings).
    auto r = run_cli("run -t probe -p " + tiny() + " --set hbm.model=pipe --set 'hbm.controller_latency=1e15 ns'");
    EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
    EXPECT_HAS(r.err, "simulated time overflow: a ");
    EXPECT_HAS(r.err, "of 1e+15 ns");
    EXPECT_EQ(r.out, "");
}

TEST(BadInputCli, LinkBandwidth1em300BpsOverflowsTimeExit3NoFigure) {
    std::string json = temp_file("", ".json");
    auto r = run_cli("run -t probe -p " + tiny() + " --set 'noc.link_bandwidth=1e-300 B/s' -o " + json);
    EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
    EXPECT_HAS(r.err, "simulated time overflow");
    EXPECT_EQ(r.out.find("latency"), std::string::npos) << r.out;
    auto j = nlohmann::json::parse(read_file(json));
    EXPECT_TRUE(j["results"].is_null()) << j["results"];
    EXPECT_FALSE(j["sim"]["errors"].empty());
}

// ---- sizes ------------------------------------------------------------------------------------

TEST(BadInputCli, ProbeOffset1e20BExit2NotOffsetZero) {
    auto r = run_cli("run -t probe -p " + tiny() + " --set 'testbench.offset=1e20 B'");
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    EXPECT_HAS(r.err, "--set testbench.offset=1e20 B: key 'testbench.offset': '1e20 B' is too large");
}

TEST(BadInputCli, ProbeOffsetBeyondStackExit2) {
    // 1 GiB stacks on tiny: the read would land in stack 1 and be reported as stack0 (local).
    auto r = run_cli("run -t probe -p " + tiny() + " --set 'testbench.offset=1 GiB'");
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    EXPECT_HAS(r.err, "--set testbench.offset=1 GiB: testbench.offset + testbench.bytes");
    EXPECT_HAS(r.err, "beyond the stack's hbm.stack_capacity (1 GiB)");
}

TEST(BadInputCli, B2bN34000TimesBytesBeyondStackExit2) {
    auto r = run_cli("run -t b2b -p " + tiny() + " --set testbench.n=34000");
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    EXPECT_HAS(r.err, "testbench.n x testbench.bytes (34000 x 32768)");
}

TEST(BadInputCli, HostKernelsTimesBatch1e10Exit2) {
    auto r = run_cli("run -t host -p " + trn1() + " -w " + source_path("configs/workloads/host_matmul_512.yaml") +
                     " --set workload.kernels=100000 --set workload.batch=100000");
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    EXPECT_HAS(r.err, "workload.kernels x workload.batch = 100000 x 100000");
}

TEST(BadInputCli, Tile5OnTwoTilePlatformCaughtByValidateAndDryRun) {
    auto r = run_cli("run -t probe -p " + tiny() + " --set testbench.tile=5");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_HAS(r.err, "--set testbench.tile=5: testbench.tile=5 but the platform has 2 tiles");
    std::string dir = temp_dir();
    write_file(dir + "/spec.yaml", "name: t\nplatform: " + tiny() + "\ntestbench: probe\n"
                                   "grid:\n  testbench.tile: [0, 5]\n");
    r = run_cli("sweep " + dir + "/spec.yaml --dry-run");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_HAS(r.out, "invalid");
    EXPECT_HAS(r.out, "testbench.tile=5 but the platform has 2 tiles");
    fs::remove_all(dir);
}

// ---- CLI values -------------------------------------------------------------------------------

TEST(BadInputCli, TraceMaxEventsMinus1Exit2) {
    auto r = run_cli("run -t probe -p " + tiny() + " --trace /dev/null --trace-max-events -1");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_HAS(r.err, "--trace-max-events -1: '-1' is not a whole number");
}

TEST(BadInputCli, ReversedTraceWindowExit2) {
    auto r = run_cli("run -t probe -p " + tiny() + " --trace /dev/null --trace-window '5 us..1 us'");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_HAS(r.err, "END must be after START");
}

TEST(BadInputCli, ExtraPositionalArgumentExit2) {
    auto r = run_cli("run -t probe -p " + tiny() + " stray");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    r = run_cli("validate " + tiny() + " " + tiny());
    EXPECT_EQ(r.exit_code, 2) << r.err;
}

TEST(BadInputCli, StatsJsonPointingAtADirectoryExit2BeforeRunning) {
    std::string dir = temp_dir();
    auto r = run_cli("run -t probe -p " + tiny() + " -o " + dir);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_HAS(r.err, "--stats-json " + dir + ": is a directory");
    EXPECT_EQ(r.out, "");
    fs::remove_all(dir);
}

// `calibrate flow -o` is checked before the table is measured, as `run -o` is.
TEST(BadInputCli, CalibrateOutputInAMissingDirectoryExit2BeforeMeasuring) {
    auto r = run_cli("calibrate flow -p " + tiny() + " -o /nonexistent-nctlm-dir/table.json");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_HAS(r.err, "-o /nonexistent-nctlm-dir/table.json: cannot write");
    EXPECT_EQ(r.out, "");
}

// Outputs are written whole at the end (temporary + rename): a run killed halfway leaves the
// previous stats file as it was and creates no empty trace.
TEST(BadInputCli, KilledRunLeavesThePreviousStatsFileAndNoEmptyTrace) {
    std::string dir = temp_dir(), stats = dir + "/stats.json", trace = dir + "/trace.json";
    auto r = run_cli("run -t probe -p " + tiny() + " -q -o " + stats);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto read = [](const std::string& path) {
        std::ifstream in(path);
        return std::string(std::istreambuf_iterator<char>(in), {});
    };
    std::string before = read(stats);
    ASSERT_NE(before.find("\"latency_ns\""), std::string::npos);
    // About 4 s of simulation, killed after 1 s (timeout sends SIGTERM; exit 124).
    std::string cmd = "timeout 1 " + std::string(NCTLM_BIN) + " run -t gemm -p " + trn1() +
                      " -w gemm_32x3072x32 --set workload.tiles=40000 -q -o " + stats + " --trace " + trace;
    int status = std::system(cmd.c_str());
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 124) << "the run ended before it was killed";
    EXPECT_EQ(read(stats), before);
    EXPECT_FALSE(fs::exists(trace));
    auto files = std::distance(fs::directory_iterator(dir), fs::directory_iterator());
    EXPECT_EQ(files, 1) << "a temporary was left behind";
    r = run_cli("run -t probe -p " + tiny() + " --stats-json /dev/stdout");  // a device: written in place
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_HAS(r.out, "\"latency_ns\"");
    EXPECT_TRUE(fs::exists("/dev/stdout"));
    fs::remove_all(dir);
}

TEST(BadInputCli, SetWithSpacesKEqualsVIsTrimmed) {
    auto r = run_cli("run -t probe -p " + trn1() + " --set 'dma.channels = 4' --stats-json /dev/stdout");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_HAS(r.out, "\"channels\": 4");
}

TEST(BadInputCli, TrafficRegionLargerThanAStackExit2BeforeRunning) {
    auto r = run_cli("run -t traffic -p " + tiny() + " --set testbench.path=dma --set testbench.region=1TiB");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_HAS(r.err, "testbench.region=1 TiB is larger than a stack");
}

TEST(BadInputCli, SweepJobsMinus1Exit2) {
    std::string dir = temp_dir();
    auto r = run_cli("sweep " + small_spec(dir) + " -o " + dir + "/out -j -1");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_HAS(r.err, "--jobs -1: '-1' is not a whole number");
    fs::remove_all(dir);
}

TEST(BadInputCli, SweepTimeoutMinus5Exit2) {
    std::string dir = temp_dir();
    auto r = run_cli("sweep " + small_spec(dir) + " -o " + dir + "/out --timeout -5");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_HAS(r.err, "--timeout -5:");
    fs::remove_all(dir);
}

TEST(BadInputCli, SweepTimeout1e400sExit2) {
    std::string dir = temp_dir();
    auto r = run_cli("sweep " + small_spec(dir) + " -o " + dir + "/out --timeout '1e400 s'");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_HAS(r.err, "--timeout 1e400 s: '1e400 s' is not a finite number");
    r = run_cli("sweep " + small_spec(dir, "timeout: 1e400\n") + " --dry-run");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_HAS(r.err, "spec.yaml:4:");
    fs::remove_all(dir);
}

TEST(BadInputCli, SweepOutputPointingAtAFileExit2) {
    std::string dir = temp_dir();
    write_file(dir + "/file", "x");
    auto r = run_cli("sweep " + small_spec(dir) + " -o " + dir + "/file");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_HAS(r.err, "exists and is not a directory");
    fs::remove_all(dir);
}

TEST(BadInputCli, SweepSpecWithDuplicateKeyExit2) {
    std::string dir = temp_dir();
    write_file(dir + "/spec.yaml", "name: a\nname: b\nplatform: " + tiny() + "\ntestbench: probe\n");
    auto r = run_cli("sweep " + dir + "/spec.yaml --dry-run");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_HAS(r.err, "spec.yaml:2:1: duplicate key 'name'");
    fs::remove_all(dir);
}

// A fake Slurm whose only node is down: the sweep must refuse at once, not wait forever.
TEST(BadInputCli, SlurmSubmitWithNoLiveNodeExit2Quickly) {
    std::string dir = temp_dir();
    fs::create_directories(dir + "/bin");
    for (auto [name, body] : {std::pair<const char*, const char*>{"sinfo", "echo down"},
                              {"sbatch", "echo 42"},
                              {"squeue", "echo PENDING"},
                              {"scancel", "true"}}) {
        write_file(dir + "/bin/" + name, std::string("#!/bin/sh\n") + body + "\n");
        fs::permissions(dir + "/bin/" + name, fs::perms::owner_all);
    }
    auto start = std::chrono::steady_clock::now();
    auto r = run_shell("PATH=" + dir + "/bin:$PATH " + std::string(NCTLM_BIN) + " sweep " + small_spec(dir) +
                       " -o " + dir + "/out --backend slurm");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_HAS(r.err, "no Slurm node is up (sinfo node states: down)");
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
    // A node that is up but never runs the job: bounded by NCTLM_SLURM_PENDING_S.
    write_file(dir + "/bin/sinfo", "#!/bin/sh\necho idle\n");
    r = run_shell("NCTLM_SLURM_PENDING_S=2 PATH=" + dir + "/bin:$PATH " + std::string(NCTLM_BIN) + " sweep " +
                  small_spec(dir) + " -o " + dir + "/out2 --backend slurm");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_HAS(r.err, "job 42 stayed pending");
    fs::remove_all(dir);
}

// ---- resource limits --------------------------------------------------------------------------

TEST(BadInputCli, HostTenMillionKernelsOverMaxMemoryRefusedExit2) {
    auto r = run_cli("run -t host -p " + trn1() + " -w " + source_path("configs/workloads/host_matmul_512.yaml") +
                     " --set workload.kernels=100000 --set workload.batch=100 --max-memory '1 GiB'");
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    EXPECT_HAS(r.err, "--max-memory 1 GiB: this run needs about");
}

TEST(BadInputCli, TraceCapCountsTowardsMaxMemory) {
    auto r = run_cli("run -t probe -p " + tiny() + " --trace /dev/null --trace-max-events 100000000 --max-memory '1 GiB'");
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    EXPECT_HAS(r.err, "this run needs about");
    r = run_cli("run -t probe -p " + tiny() + " --max-memory '1 GiB'");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    r = run_cli("run -t probe -p " + tiny() + " --max-memory 1e400B");
    EXPECT_EQ(r.exit_code, 2) << r.err;
}
