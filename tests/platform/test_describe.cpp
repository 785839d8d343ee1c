// `nctlm describe` covers exactly what a run reads: every key `--set` accepts is described, and
// every described key is accepted by --set (for each testbench, with its workload).
#include "platforms/shipped_configs.h"
#include "testbenches/testbench.h"
#include "tests/support.h"

#include <gtest/gtest.h>
#include <set>
#include <sstream>

using namespace nctlm;

namespace {

RunOptions options_for(const TestbenchInfo& t) {
    RunOptions o;
    o.platform_file = test::platform("tiny");
    o.testbench = t.name;
    if (t.program_workload) {  // a shipped kernel program or op graph
        o.workload_file = t.program_kind == "graphs" ? "mlp_tp2" : "add";
        return o;
    }
    for (auto& w : shipped_configs("workloads"))  // a shipped workload for testbenches that need one
        if (w.rfind(t.name + "_", 0) == 0) {
            o.workload_file = w;
            break;
        }
    return o;
}

std::string text(const nlohmann::json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

// Every key a run with this testbench actually loaded (the effective config), as section.key.
std::set<std::string> loaded_keys(const LoadedRun& r) {
    std::set<std::string> keys;
    for (auto& [section, values] : r.tree.effective().items())
        for (auto& [key, _] : values.items())
            keys.insert(section + "." + key);
    return keys;
}

std::set<std::string> describe_keys() {
    auto r = test::run_cli("describe --keys");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::set<std::string> keys;
    std::istringstream in(r.out);
    for (std::string line; std::getline(in, line);)
        keys.insert(line);
    return keys;
}

} // namespace

TEST(Describe, CoversEveryKeyARunReadsAndSetAcceptsEachOne) {
    std::set<std::string> described = describe_keys(), loaded_anywhere;
    ASSERT_GT(described.size(), 50u);
    for (auto& t : testbenches()) {
        SCOPED_TRACE("testbench " + t.name);
        RunOptions base = options_for(t);
        LoadedRun r = load_run(base);
        std::set<std::string> loaded = loaded_keys(r);
        for (auto& k : loaded) {
            EXPECT_TRUE(described.count(k)) << k << " is read by a run but not described";
            loaded_anywhere.insert(k);
        }
        // Each loaded key, set to its own effective value with --set, is accepted.
        for (auto& [section, values] : r.tree.effective().items())
            for (auto& [key, value] : values.items()) {
                RunOptions o = base;
                o.overrides = {section + "." + key + "=" + text(value)};
                EXPECT_NO_THROW(load_run(o)) << o.overrides[0];
            }
        // A key nobody reads is refused, naming --set.
        RunOptions bad = base;
        bad.overrides = {"dma.no_such_key=1"};
        EXPECT_THROW(load_run(bad), ConfigError);
    }
    for (auto& k : described)
        EXPECT_TRUE(loaded_anywhere.count(k)) << k << " is described but no run reads it";
}

TEST(Describe, TestbenchesDescribeTheirSections) {
    auto r = test::run_cli("describe b2b");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    for (auto* key : {"`testbench.n`", "`testbench.bytes`", "`testbench.tile`", "`testbench.queue`"})
        EXPECT_NE(r.out.find(key), std::string::npos) << key << "\n" << r.out;
    auto g = test::run_cli("describe gemm");
    EXPECT_NE(g.out.find("`workload.m`"), std::string::npos) << g.out;
    auto index = test::run_cli("describe");
    EXPECT_EQ(index.exit_code, 0);
    for (auto* name : {"dma", "hbm", "probe", "gemm", "workload.*"})
        EXPECT_NE(index.out.find(name), std::string::npos) << name << "\n" << index.out;
    auto help = test::run_cli("describe --help");
    EXPECT_NE(help.out.find("gqa"), std::string::npos) << help.out;
    auto bad = test::run_cli("describe b2c");
    EXPECT_EQ(bad.exit_code, 2);
    EXPECT_NE(bad.err.find("did you mean 'b2b'"), std::string::npos) << bad.err;
}

TEST(Describe, SchemaHasEverySectionAndRefusesUnknownKeys) {
    auto r = test::run_cli("describe --schema");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto s = nlohmann::json::parse(r.out);
    for (auto* section : {"platform", "dma", "noc", "hbm", "pe", "host", "testbench", "workload"})
        EXPECT_TRUE(s["properties"].contains(section)) << section;
    EXPECT_EQ(s["properties"]["dma"]["additionalProperties"], false);
    EXPECT_TRUE(s["properties"]["dma"]["properties"].contains("channels"));
}

TEST(Describe, FriendlyMessagesForShippedNamesAndMissingWorkload) {
    auto v = test::run_cli("validate -p tiny -t probe --set testbench.bytes=4KiB");
    EXPECT_EQ(v.exit_code, 0) << v.err;
    auto tile = test::run_cli("validate -p tiny -t probe --set testbench.tile=200");
    EXPECT_EQ(tile.exit_code, 2) << "validate builds the testbench, which checks the tile: " << tile.err;
    auto g = test::run_cli("run -p tiny -t gemm");
    EXPECT_EQ(g.exit_code, 2);
    EXPECT_NE(g.err.find("needs a workload"), std::string::npos) << g.err;
    EXPECT_NE(g.err.find("gemm_32x3072x32"), std::string::npos) << g.err;
    auto typo = test::run_cli("run -p tiny -t probe --set dma.chanels=2");
    EXPECT_EQ(typo.exit_code, 2);
    EXPECT_NE(typo.err.find("did you mean 'channels'"), std::string::npos) << typo.err;
    EXPECT_NE(typo.err.find("known: "), std::string::npos) << "known keys shown with the guess: " << typo.err;
    auto version = test::run_cli("--version");
    EXPECT_EQ(version.exit_code, 0);
    EXPECT_EQ(version.out.rfind("nctlm 0.", 0), 0u) << version.out;
}
