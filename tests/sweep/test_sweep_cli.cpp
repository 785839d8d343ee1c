// `nctlm sweep` end to end through the CLI: points in their own processes, rows per point,
// failures recorded, resume after a kill, plots.
#include "tests/sweep/sweep_test_util.h"

#include <csignal>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace nctlm::test;
namespace fs = std::filesystem;

namespace {

// A spec in a temp dir; platform paths are absolute so it can live anywhere.
std::string spec_file(const std::string& dir, const std::string& body) {
    std::string path = dir + "/spec.yaml";
    write_file(path, "platform: " + platform("tiny") + "\n" + body);
    return path;
}

} // namespace

// Parameters are read per point: three shapes give three rows that differ as the shapes do.
TEST(SweepCli, ThreeB2bShapesGiveThreeDifferentRows) {
    std::string dir = temp_dir();
    std::string spec = spec_file(dir, "testbench: b2b\ngrid:\n  testbench.n: [2, 8, 32]\n");
    auto r = run_cli("sweep " + spec + " -o " + dir + "/out -j 2");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto rs = rows(dir + "/out");
    ASSERT_EQ(rs.size(), 3u);
    const int n[] = {2, 8, 32};
    for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(rs[i]["id"], "000" + std::to_string(i)) << rs[i];
        EXPECT_EQ(rs[i]["status"], "ok");
        EXPECT_EQ(rs[i]["testbench.n"], n[i]);
        EXPECT_EQ(rs[i]["n"], n[i]);  // the testbench's own echo of its parameter
        EXPECT_DOUBLE_EQ(rs[i]["serial_ns"].get<double>(), n[i] * rs[i]["single_op_ns"].get<double>());
        EXPECT_GT(rs[i]["sim_time_ns"].get<double>(), 0);
        // The effective config of the point, with the swept value in it.
        std::string yaml = read_file(dir + "/out/points/" + rs[i]["id"].get<std::string>() + ".yaml");
        EXPECT_NE(yaml.find("n: " + std::to_string(n[i])), std::string::npos) << yaml;
    }
    // More requests behind one queue take longer in total.
    EXPECT_LT(rs[0]["sim_time_ns"].get<double>(), rs[1]["sim_time_ns"].get<double>());
    EXPECT_LT(rs[1]["sim_time_ns"].get<double>(), rs[2]["sim_time_ns"].get<double>());
    // The CSV has the same rows, a header first.
    std::string csv = read_file(dir + "/out/results.csv");
    EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 4);
    EXPECT_EQ(csv.rfind("id,status,exit_code,testbench.n,", 0), 0u) << csv;
    fs::remove_all(dir);
}

// The same with GEMM shapes: more tiles stream through the pipeline, its fill is amortized.
TEST(SweepCli, ThreeGemmShapesGiveThreeDifferentRows) {
    std::string dir = temp_dir();
    std::string spec = dir + "/spec.yaml";
    write_file(spec, "platform: " + platform("trn1") + "\ntestbench: gemm\nworkload: " +
                         source_path("configs/workloads/gemm_32x3072x32.yaml") +
                         "\ngrid:\n  workload.tiles: [1, 4, 16]\n");
    auto r = run_cli("sweep " + spec + " -o " + dir + "/out -j 2");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto rs = rows(dir + "/out");
    ASSERT_EQ(rs.size(), 3u);
    const int tiles[] = {1, 4, 16};
    for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(rs[i]["status"], "ok");
        EXPECT_EQ(rs[i]["workload.tiles"], tiles[i]);
        EXPECT_EQ(rs[i]["tiles"], tiles[i]) << rs[i];  // the testbench read the swept value
    }
    EXPECT_LT(rs[0]["efficiency"].get<double>(), rs[1]["efficiency"].get<double>());
    EXPECT_LT(rs[1]["efficiency"].get<double>(), rs[2]["efficiency"].get<double>());
    EXPECT_LT(rs[0]["sim_time_ns"].get<double>(), rs[2]["sim_time_ns"].get<double>());
    fs::remove_all(dir);
}

TEST(SweepCli, ProbeSizesGiveGrowingLatency) {
    std::string dir = temp_dir();
    std::string spec = spec_file(dir, "testbench: probe\ngrid:\n  testbench.bytes: \"1 KiB..16 KiB x4\"\n");
    auto r = run_cli("sweep " + spec + " -o " + dir + "/out -j 2");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto rs = rows(dir + "/out");
    ASSERT_EQ(rs.size(), 3u);
    EXPECT_EQ(rs[0]["testbench.bytes"], "1 KiB");
    EXPECT_EQ(rs[2]["bytes"], 16384);
    EXPECT_LT(rs[0]["latency_ns"].get<double>(), rs[1]["latency_ns"].get<double>());
    EXPECT_LT(rs[1]["latency_ns"].get<double>(), rs[2]["latency_ns"].get<double>());
    fs::remove_all(dir);
}

// A point whose config the sweep rejects, one whose run fails, one that times out: each is a
// row with its status, and the good point still runs.
TEST(SweepCli, FailingPointsAreRecordedAndTheSweepGoesOn) {
    std::string dir = temp_dir();
    std::string spec = spec_file(dir, "testbench: b2b\n"
                                      "zip:\n"
                                      "  dma.channels: [4, 0, 4, 4]\n"
                                      "  testbench.queue: [0, 0, 9, 0]\n"
                                      "  testbench.n: [4, 4, 4, 100000]\n"
                                      // the last point stays inside tiny's 1 GiB stack (a b2b
                                      // range past it is refused before running) but is slow
                                      "  testbench.bytes: [1 KiB, 1 KiB, 1 KiB, 10 KiB]\n"
                                      "  dma.burst_size: [1 KiB, 1 KiB, 1 KiB, 256 B]\n");
    auto r = run_cli("sweep " + spec + " -o " + dir + "/out -j 2 --timeout 2");
    EXPECT_EQ(r.exit_code, 3) << r.err;
    auto rs = rows(dir + "/out");
    ASSERT_EQ(rs.size(), 4u);
    EXPECT_EQ(rs[0]["status"], "ok");
    EXPECT_EQ(rs[1]["status"], "invalid");  // dma.channels=0 is out of range: caught before running
    EXPECT_NE(rs[1]["error"].get<std::string>().find("dma.channels"), std::string::npos) << rs[1];
    EXPECT_EQ(rs[2]["status"], "failed");   // testbench.queue=9 > dma.queues=4: the run exits 2
    EXPECT_EQ(rs[2]["exit_code"], 2);
    EXPECT_NE(rs[2]["error"].get<std::string>().find("testbench.queue"), std::string::npos) << rs[2];
    EXPECT_EQ(rs[3]["status"], "timeout");
    EXPECT_NE(r.err.find("1 ok, 3 failed"), std::string::npos) << r.err;
    fs::remove_all(dir);
}

TEST(SweepCli, DryRunListsPointsAndWritesNothing) {
    std::string dir = temp_dir();
    std::string spec = spec_file(dir, "testbench: b2b\ngrid:\n  dma.channels: \"2..8 step 2\"\n"
                                      "overrides:\n  - when: {dma.channels: 2}\n    set: {testbench.n: 3}\n");
    auto r = run_cli("sweep " + spec + " -o " + dir + "/out --dry-run");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("4 points"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("0000 "), std::string::npos);
    EXPECT_NE(r.out.find("dma.channels=8"), std::string::npos);
    EXPECT_NE(r.out.find("override: testbench.n=3"), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(dir + "/out"));
    fs::remove_all(dir);
}

TEST(SweepCli, BadSpecIsAUsageErrorWithTheLine) {
    std::string dir = temp_dir();
    std::string spec = spec_file(dir, "testbench: b2b\ngrid:\n  dma.channels: [1, 2]\nplott: {x: a, y: b}\n");
    auto r = run_cli("sweep " + spec + " -o " + dir + "/out");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("spec.yaml:5:1"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("did you mean 'plot'"), std::string::npos) << r.err;
    fs::remove_all(dir);
}

// Kill the sweep mid-way (SIGKILL: no chance to clean up), then --resume: no torn rows, the
// finished points are not run again, and the rows equal those of an uninterrupted sweep.
TEST(SweepCli, ResumeAfterKillCompletesWithIdenticalRows) {
    std::string dir = temp_dir();
    // Each point takes a moment (many requests on trn1) so the kill lands mid-sweep.
    std::string spec = dir + "/spec.yaml";
    write_file(spec, "platform: " + platform("trn1") + "\ntestbench: b2b\n"
                     "grid:\n  dma.channel_release: [on_accept, on_response]\n"
                     "  testbench.n: [8000, 9000, 10000, 11000]\n");
    std::string out = dir + "/out";
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        if (!freopen("/dev/null", "w", stderr))
            _exit(127);
        execl(NCTLM_BIN, NCTLM_BIN, "sweep", spec.c_str(), "-o", out.c_str(), "-j", "1", (char*)nullptr);
        _exit(127);
    }
    auto count_rows = [&] {
        size_t n = 0;
        std::error_code ec;
        for (auto& e : fs::directory_iterator(out + "/rows", ec))
            n += e.path().extension() == ".json";
        return n;
    };
    for (int i = 0; i < 6000 && count_rows() < 2; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    size_t before = count_rows();
    ASSERT_GE(before, 2u);
    ASSERT_LT(before, 8u) << "the sweep finished before the kill; the points are too fast for this test";
    // Whatever was written is whole: every results line parses (may lag the rows by up to 2 s).
    if (fs::exists(out + "/results.jsonl")) {
        EXPECT_NO_THROW(rows(out));
    }
    std::string first_row = read_file(out + "/rows/0000.json");

    auto r = run_cli("sweep " + spec + " -o " + out + " -j 2 --resume");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find(std::to_string(before) + " reused"), std::string::npos) << r.err;
    EXPECT_EQ(read_file(out + "/rows/0000.json"), first_row);  // not run again
    auto resumed = rows(out);
    ASSERT_EQ(resumed.size(), 8u);

    auto fresh = run_cli("sweep " + spec + " -o " + dir + "/fresh -j 2");
    ASSERT_EQ(fresh.exit_code, 0) << fresh.err;
    auto expected = rows(dir + "/fresh");
    ASSERT_EQ(expected.size(), 8u);
    for (size_t i = 0; i < 8; ++i)
        EXPECT_EQ(model_columns(resumed[i]), model_columns(expected[i])) << i;
    // A second --resume runs nothing.
    auto again = run_cli("sweep " + spec + " -o " + out + " --resume");
    EXPECT_NE(again.err.find("(0 to run, 8 reused)"), std::string::npos) << again.err;
    fs::remove_all(dir);
}

TEST(SweepCli, SpecPlotWritesAPng) {
    if (system("/usr/bin/python3 -c 'import matplotlib' >/dev/null 2>&1") != 0)
        GTEST_SKIP() << "no /usr/bin/python3 with matplotlib (Debian python3-matplotlib)";
    std::string dir = temp_dir();
    // Two figures over one axis (the second dashed), a hue, a log axis.
    std::string spec = spec_file(dir, "name: plotted\ntestbench: b2b\ngrid:\n"
                                      "  dma.channel_release: [on_accept, on_response]\n"
                                      "  testbench.n: [2, 4]\n"
                                      "plot: {x: testbench.n, y: [ratio, single_op_ns], hue: dma.channel_release,"
                                      " logy: true}\n");
    auto r = run_cli("sweep " + spec + " -o " + dir + "/out");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::string png = read_file(dir + "/out/plotted.png");
    ASSERT_GT(png.size(), 1000u) << r.err;
    EXPECT_EQ(png.substr(1, 3), "PNG");
    // The script on its own names what is wrong.
    auto bad = run_shell(source_path("scripts/plot") + " " + dir + "/out --x nope --y ratio");
    EXPECT_NE(bad.exit_code, 0);
    EXPECT_NE(bad.err.find("no column 'nope'"), std::string::npos) << bad.err;
    fs::remove_all(dir);
}

// A runaway grid is refused before any point is built, with its size; --max-points lifts the cap.
TEST(SweepCli, GridOverTheCapIsRefusedAtOnceWithTheCount) {
    std::string dir = temp_dir();
    std::string spec = spec_file(dir, "testbench: probe\ngrid:\n  testbench.tile: \"0..1\"\n"
                                      "  noc.hop_cycles: \"1..1000\"\n  hbm.controller_latency: \"1 ns..1000 ns\"\n");
    auto start = std::chrono::steady_clock::now();
    auto r = run_cli("sweep " + spec + " -o " + dir + "/out");
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("the sweep has 2000000 points, more than --max-points 100000"), std::string::npos) << r.err;
    EXPECT_LT(seconds, 20);  // not hours of preparation; generous for a loaded machine
    auto dry = run_cli("sweep " + spec + " --dry-run --max-points 10");
    EXPECT_EQ(dry.exit_code, 2);
    std::string small = spec_file(dir, "testbench: probe\ngrid:\n  noc.hop_cycles: \"1..3\"\n");
    EXPECT_EQ(run_cli("sweep " + small + " --dry-run --max-points 3").exit_code, 0);
    EXPECT_EQ(run_cli("sweep " + small + " --dry-run --max-points 2").exit_code, 2);
    fs::remove_all(dir);
}

TEST(SweepCli, NoPlotSkipsTheSpecsPlots) {
    std::string dir = temp_dir();
    std::string spec = spec_file(dir, "name: quiet\ntestbench: probe\ngrid:\n  noc.hop_cycles: [1, 2]\n"
                                      "plot: {x: noc.hop_cycles, y: latency_ns}\n");
    auto r = run_cli("sweep " + spec + " -o " + dir + "/out -j 2 --no-plot");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(rows(dir + "/out").size(), 2u);
    EXPECT_FALSE(fs::exists(dir + "/out/quiet.png"));
    EXPECT_EQ(r.err.find("plot"), std::string::npos) << r.err;
    fs::remove_all(dir);
}
