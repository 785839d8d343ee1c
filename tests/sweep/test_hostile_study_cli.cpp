// Hostile input to the sweep and the studies (issue 23): paths from a spec stay inside -o, what a
// spec names is checked once at its line before points run, --resume leaves no stale point file,
// and sensitivity/uncertainty take the sweep's flags with the sweep's checks and exit codes.
#include "tests/sweep/sweep_test_util.h"

#include <gtest/gtest.h>

using namespace nctlm::test;
namespace fs = std::filesystem;

namespace {
#define EXPECT_HAS(text, part) EXPECT_NE((text).find(part), std::string::npos) << (text)

std::string spec_file(const std::string& dir, const std::string& body) {
    std::string spec = dir + "/spec.yaml";
    write_file(spec, body);
    return spec;
}

size_t files_in(const std::string& dir) {
    std::error_code ec;
    size_t n = 0;
    for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator(); ++it)
        ++n;
    return n;
}

const char* kProbe = "platform: tiny\ntestbench: probe\n";
} // namespace

// ---- paths from a spec ---------------------------------------------------------------------------

TEST(HostileStudy, SpecNameDotDotEvilIsRefusedAndNothingLandsOutsideO) {
    std::string dir = temp_dir();
    fs::create_directories(dir + "/a/b");
    std::string spec = spec_file(dir + "/a/b", "name: ../../evil\n" + std::string(kProbe) +
                                                    "grid:\n  testbench.bytes: [1 KiB]\nplot: {x: testbench.bytes, "
                                                    "y: latency_ns}\n");
    auto r = run_cli("sweep " + spec + " -o " + dir + "/a/b/out");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_HAS(r.err, spec + ":1:7: name '../../evil' must be a plain name");
    EXPECT_FALSE(fs::exists(dir + "/evil.png"));
    EXPECT_FALSE(fs::exists(dir + "/a/b/out"));
    fs::remove_all(dir);
}

TEST(HostileStudy, PlotFileOutsideTheOutputIsRefused) {
    std::string dir = temp_dir();
    for (const char* file : {"../x.png", "/tmp/x.png", "a/../../x.png"}) {
        std::string spec = spec_file(dir, std::string(kProbe) + "grid:\n  testbench.bytes: [1 KiB]\nplot: {x: "
                                                                "testbench.bytes, y: latency_ns, file: '" +
                                                                file + "'}\n");
        auto r = run_cli("sweep " + spec + " -o " + dir + "/out");
        EXPECT_EQ(r.exit_code, 2) << file << ": " << r.err;
        EXPECT_HAS(r.err, "must be a relative path inside the output directory");
    }
    fs::remove_all(dir);
}

// ---- what a spec names, checked at its line before any point runs ---------------------------------

TEST(HostileStudy, GridKeyTypoIsReportedOnceAtItsLineBeforeAnyPointRuns) {
    std::string dir = temp_dir();
    std::string spec = spec_file(dir, std::string(kProbe) + "grid:\n  testbench.bytes: [1 KiB, 2 KiB]\n"
                                                            "  dma.chanels: [1, 2]\n");
    auto r = run_cli("sweep " + spec + " -o " + dir + "/out");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(r.err, spec + ":5:3: 'dma.chanels' is not a key of the platform or of testbench 'probe'; did you mean "
                            "'dma.channels'? (nctlm describe probe)\n");
    EXPECT_FALSE(fs::exists(dir + "/out")) << "nothing ran";
    fs::remove_all(dir);
}

TEST(HostileStudy, TestbenchTypoIsReportedAtItsLine) {
    std::string dir = temp_dir();
    std::string spec = spec_file(dir, "platform: tiny\ntestbench: prbe\ngrid:\n  testbench.bytes: [1 KiB]\n");
    auto r = run_cli("sweep " + spec + " --dry-run");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_HAS(r.err, spec + ":2:12: unknown testbench 'prbe'; did you mean 'probe'?");
    fs::remove_all(dir);
}

TEST(HostileStudy, PlotYTypoIsFoundAfterOnePointNotAll) {
    std::string dir = temp_dir();
    std::string spec = spec_file(dir, std::string(kProbe) + "grid:\n  testbench.bytes: [1 KiB, 2 KiB, 4 KiB, 8 KiB]\n"
                                                            "plot: {x: testbench.bytes, y: latncy_ns}\n");
    auto r = run_cli("sweep " + spec + " -o " + dir + "/out -j 2");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_HAS(r.err, spec + ":5:31: plot.y 'latncy_ns' is neither an axis nor a result of testbench 'probe'; did "
                             "you mean 'latency_ns'?");
    EXPECT_EQ(files_in(dir + "/out/rows"), 1u) << "one point ran";
    fs::remove_all(dir);
}

// ---- resume --------------------------------------------------------------------------------------

TEST(HostileStudy, ResumeWithAChangedSpecRewritesOrRemovesEveryPointFile) {
    std::string dir = temp_dir(), out = dir + "/out";
    auto sweep = [&](const std::string& values) {
        std::string spec = spec_file(dir, std::string(kProbe) + "grid:\n  testbench.bytes: [" + values + "]\n");
        return run_cli("sweep " + spec + " -o " + out + " --resume");
    };
    ASSERT_EQ(sweep("1 KiB, 2 KiB").exit_code, 0);
    // 2 KiB moves from point 0001 to 0000; 4 KiB is new at 0001.
    auto r = sweep("2 KiB, 4 KiB");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_HAS(r.err, "(1 reused by --resume)");
    auto stats0 = nlohmann::json::parse(read_file(out + "/points/0000.json"));
    auto stats1 = nlohmann::json::parse(read_file(out + "/points/0001.json"));
    EXPECT_EQ(stats0["config"]["testbench"]["bytes"], "2 KiB");
    EXPECT_EQ(stats1["config"]["testbench"]["bytes"], "4 KiB");
    std::string yaml0 = read_file(out + "/points/0000.yaml");
    EXPECT_HAS(yaml0, "testbench.bytes=2 KiB");
    EXPECT_EQ(yaml0.find("testbench.bytes=1 KiB"), std::string::npos) << yaml0;
    // The replay line of point 0000 reproduces its row.
    std::string replay = yaml0.substr(yaml0.find("# replay: nctlm ") + 16);
    replay = replay.substr(0, replay.find('\n'));
    std::string json = temp_file("", ".json");
    replay.replace(replay.find(out + "/points/0000.json"), (out + "/points/0000.json").size(), json);
    ASSERT_EQ(run_cli(replay).exit_code, 0) << replay;
    EXPECT_EQ(nlohmann::json::parse(read_file(json))["results"], stats0["results"]);
    // A shrunk spec leaves no file of the dropped point.
    ASSERT_EQ(sweep("2 KiB").exit_code, 0);
    for (const char* ext : {".json", ".yaml", ".log"})
        EXPECT_FALSE(fs::exists(out + "/points/0001" + ext)) << ext;
    fs::remove_all(dir);
}

// ---- the studies share the sweep's flags and checks -------------------------------------------

TEST(HostileStudy, StudiesRefuseWhatTheSweepRefusesExit2) {
    std::string dir = temp_dir(), file = dir + "/a-file";
    write_file(file, "x");
    const std::string run = " -p tiny -t probe --params noc.hop_cycles";
    struct Case {
        std::string args, message;
    } cases[] = {
        {" -o " + file, "-o " + file + ": exists and is not a directory"},
        {" -o " + dir + "/o --timeout 0", "--timeout 0: '0': a timeout must be > 0"},
        {" -o " + dir + "/o --timeout -1", "--timeout -1: "},
        {" -o " + dir + "/o --timeout nan", "--timeout nan: "},
        {" -o " + dir + "/o -j 0", "--jobs 0: 0 is out of range [1 .. 4096]"},
        {" -o " + dir + "/o --params ''", "--params '': an empty list"},
    };
    for (const char* study : {"sensitivity", "uncertainty"})
        for (auto& c : cases) {
            std::string args = std::string(study) + (c.args.find("--params") != std::string::npos
                                                         ? " -p tiny -t probe"
                                                         : run) +
                               c.args;
            auto r = run_cli(args);
            EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
            EXPECT_HAS(r.err, c.message);
        }
    auto sweep = run_cli("sweep " + spec_file(dir, std::string(kProbe) + "grid:\n  testbench.bytes: [1 KiB]\n") +
                         " -o " + dir + "/s --timeout nan");
    EXPECT_EQ(sweep.exit_code, 2) << sweep.err;
    auto seed = run_cli("uncertainty" + run + " -o " + dir + "/u --seed -1");
    EXPECT_EQ(seed.exit_code, 2) << seed.err;
    EXPECT_HAS(seed.err, "--seed -1: '-1' is not a whole number");
    fs::remove_all(dir);
}

TEST(HostileStudy, UnknownFigureIsRefusedAfterTheBaseRunOnly) {
    std::string dir = temp_dir();
    auto r = run_cli("sensitivity -p tiny -t probe -o " + dir + " --figures nope");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_HAS(r.err, "--figures: 'nope' is not a numeric result of testbench 'probe'");
    EXPECT_EQ(files_in(dir + "/rows"), 1u) << "only the base ran";
    fs::remove_all(dir);
}

TEST(HostileStudy, StudiesTakeShippedNames) {
    std::string dir = temp_dir();
    auto r = run_cli("uncertainty -p trn1 -t probe -n 2 --params noc.hop_cycles -o " + dir + " --no-plot");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    auto s = run_cli("sensitivity -p trn1 -t gemm -w gemm_32x3072x32 --params noc.hop_cycles -o " + dir +
                     "/s --no-plot");
    EXPECT_EQ(s.exit_code, 0) << s.err;
    fs::remove_all(dir);
}

// ---- ranking and lopsided parameters ---------------------------------------------------------------

TEST(HostileStudy, SensitivityOverRangesRanksBySwingAndFlagsLopsidedParameters) {
    std::string dir = temp_dir();
    auto r = run_cli("sensitivity -p trn1 -t probe --range -o " + dir + " --no-plot -j 2");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto report = nlohmann::json::parse(read_file(dir + "/sensitivity.json"));
    EXPECT_EQ(report["ranked_by"], "swing");
    auto& list = report["figures"]["latency_ns"]["elasticities"];
    ASSERT_GT(list.size(), 3u);
    for (size_t i = 1; i < list.size(); ++i)
        EXPECT_GE(list[i - 1]["swing"].get<double>(), list[i]["swing"].get<double>()) << i;
    // Elasticity alone would not put the largest swing first here.
    double top_e = 0;
    for (auto& row : list)
        if (row["elasticity"].is_number())
            top_e = std::max(top_e, std::fabs(row["elasticity"].get<double>()));
    EXPECT_LT(std::fabs(list[0]["elasticity"].get<double>()), top_e);
    EXPECT_HAS(r.out, "ranked by swing");
    fs::remove_all(dir);

    std::string step = temp_dir();
    auto s = run_cli("sensitivity -p trn1 -t probe --params hbm.pc_bandwidth,noc.hop_cycles -o " + step + " --no-plot");
    ASSERT_EQ(s.exit_code, 0) << s.err;
    auto rep = nlohmann::json::parse(read_file(step + "/sensitivity.json"));
    EXPECT_EQ(rep["ranked_by"], "elasticity");
    for (auto& row : rep["figures"]["latency_ns"]["elasticities"])
        EXPECT_EQ(row["lopsided"].get<bool>(), row["parameter"] == "hbm.pc_bandwidth") << row;  // -10 %: +6 %, +10 %: -0.1 %
    EXPECT_HAS(s.out, "`hbm.pc_bandwidth` *");
    fs::remove_all(step);
}

TEST(HostileStudy, UncertaintyDrawsItsIntervals) {
    std::string dir = temp_dir();
    auto r = run_cli("uncertainty -p trn1 -t probe -n 4 --params noc.hop_cycles,noc.clock -o " + dir);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_GT(fs::file_size(dir + "/uncertainty.png"), 1000u);
    EXPECT_HAS(r.err, "uncertainty.png");
    fs::remove_all(dir);
}
