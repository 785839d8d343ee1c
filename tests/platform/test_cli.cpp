// The CLI as a user meets it: exit codes and messages.
#include "tests/support.h"

#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <regex>

using namespace nctlm;

TEST(Cli, RunWritesStatsJsonWithResultsAndEffectiveConfig) {
    std::string json = test::temp_file("", ".json");
    auto r = test::run_cli("run -p " + test::platform("trn1") + " -t probe --set dma.channels=4 --stats-json " + json);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err, "") << "no banner, no noise on stderr";
    std::ifstream in(json);
    auto j = nlohmann::json::parse(in);
    double latency = j["results"]["latency_ns"].get<double>();
    EXPECT_NEAR(latency, 141.0, 0.5);
    char shown[64];
    std::snprintf(shown, sizeof shown, "latency %.2f ns", latency);
    EXPECT_NE(r.out.find(shown), std::string::npos) << r.out;
    EXPECT_EQ(j["config"]["dma"]["channels"], 4);
    EXPECT_EQ(j["config"]["hbm"]["pc_bandwidth"], "25.6 GB/s");
}

TEST(Cli, TypoInYamlKeyExits2WithFileLineColumn) {
    std::ifstream in(test::platform("trn1"));
    std::string text((std::istreambuf_iterator<char>(in)), {});
    text.replace(text.find("  hop_cycles:"), 13, "  hop_cycle:");
    std::string f = test::temp_file(text);
    auto r = test::run_cli("run -p " + f + " -t probe");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(std::regex_search(r.err, std::regex(f + ":[0-9]+:3: unknown key 'noc.hop_cycle'; did you mean "
                                                        "'hop_cycles'\\?")))
        << r.err;
}

TEST(Cli, BadUnitInSetExits2) {
    auto r = test::run_cli("run -p " + test::platform("trn1") + " -t probe --set 'hbm.pc_bandwidth=25 GHz'");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("--set hbm.pc_bandwidth=25 GHz: key 'hbm.pc_bandwidth'"), std::string::npos) << r.err;
}

TEST(Cli, UnknownTestbenchAndMissingFileExit2) {
    auto r = test::run_cli("run -p " + test::platform("trn1") + " -t prob");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("did you mean 'probe'"), std::string::npos) << r.err;
    r = test::run_cli("run -p /nonexistent.yaml -t probe");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("/nonexistent.yaml: cannot open file"), std::string::npos) << r.err;
    r = test::run_cli("run -t probe");
    EXPECT_EQ(r.exit_code, 2);
}

// An offset past the stack is caught as bad input before running (it used to run, fail with an
// address error and still print a latency); address errors themselves: Dma.AddressOutsideTheMap...
TEST(Cli, ProbeOffsetPastTheStackExits2BeforeRunning) {
    auto r = test::run_cli("run -p " + test::platform("tiny") + " -t probe --set 'testbench.offset=3 GiB'");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("beyond the stack's hbm.stack_capacity"), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "");
}

TEST(Cli, SimulationErrorExits3AndPrintsNoFigure) {
    auto r = test::run_cli("run -p " + test::platform("tiny") + " -t probe --set 'noc.link_bandwidth=1e-300 B/s'");
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_NE(r.err.find("simulated time overflow"), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "");
}

TEST(Cli, ValidatePrintsEffectiveValues) {
    auto r = test::run_cli("validate " + test::platform("trn1") + " --set dma.channels=8");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("channels: 8"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("controller_latency: 29 ns"), std::string::npos) << r.out;
}

TEST(Cli, DescribeListsEveryParameterWithUnitAndDefault) {
    auto r = test::run_cli("describe dma");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("| `dma.channel_release` | choice | on_accept | on_accept\\|on_response |"), std::string::npos)
        << r.out;
}
