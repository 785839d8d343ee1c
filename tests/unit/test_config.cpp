// Each config error kind, asserted on its message and the line/column it names.
#include "models/common/config.h"
#include "platforms/platform_config.h"
#include "tests/support.h"

#include <fstream>
#include <gtest/gtest.h>
#include <regex>

using namespace nctlm;

namespace {

std::string trn1_with(const std::string& from, const std::string& to) {
    std::ifstream in(test::platform("trn1"));
    std::string text((std::istreambuf_iterator<char>(in)), {});
    auto at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
    return test::temp_file(text);
}

int line_of(const std::string& file, const std::string& needle) {
    std::ifstream in(file);
    std::string line;
    for (int n = 1; std::getline(in, line); ++n)
        if (line.find(needle) != std::string::npos)
            return n;
    return -1;
}

std::string load_error(const std::string& file, const std::vector<std::string>& sets = {}) {
    try {
        ConfigTree t = ConfigTree::from_file(file);
        for (auto& s : sets)
            t.set(s);
        PlatformConfig::load(t);
        t.check_sections(PlatformConfig::sections());
    } catch (const ConfigError& e) {
        return e.what();
    }
    return "";
}

} // namespace

TEST(Config, DefaultPlatformLoads) {
    EXPECT_EQ(load_error(test::platform("trn1")), "");
    EXPECT_EQ(load_error(test::platform("tiny")), "");
}

TEST(Config, UnknownKeyNamesFileLineColumnAndSuggests) {
    std::string f = trn1_with("  channels: 16", "  chanels: 16");
    std::string msg = load_error(f);
    EXPECT_NE(msg.find(f + ":" + std::to_string(line_of(f, "chanels:")) + ":3:"), std::string::npos) << msg;
    EXPECT_NE(msg.find("unknown key 'dma.chanels'; did you mean 'channels'?"), std::string::npos) << msg;
}

TEST(Config, MissingKeyNamesSectionAndKey) {
    std::string f = trn1_with("  pc_bandwidth: 25.6 GB/s", "");
    std::string msg = load_error(f);
    EXPECT_NE(msg.find("missing key 'hbm.pc_bandwidth'"), std::string::npos) << msg;
    EXPECT_NE(msg.find(f + ":"), std::string::npos) << msg;
}

TEST(Config, BadUnitNamesKeyAndLine) {
    std::string f = trn1_with("pc_bandwidth: 25.6 GB/s", "pc_bandwidth: 25.6 GHz");
    std::string msg = load_error(f);
    EXPECT_NE(msg.find(f + ":" + std::to_string(line_of(f, "pc_bandwidth:"))), std::string::npos) << msg;
    EXPECT_NE(msg.find("key 'hbm.pc_bandwidth'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("unknown unit 'GHz'"), std::string::npos) << msg;
}

TEST(Config, MissingUnitIsAnError) {
    std::string msg = load_error(trn1_with("controller_latency: 29 ns", "controller_latency: 29"));
    EXPECT_NE(msg.find("has no unit"), std::string::npos) << msg;
}

TEST(Config, OutOfRangeValueNamesTheRange) {
    std::string f = trn1_with("  queues: 16 ", "  queues: 0 ");
    std::string msg = load_error(f);
    EXPECT_NE(msg.find(":" + std::to_string(line_of(f, "queues: 0")) + ":"), std::string::npos) << msg;
    EXPECT_NE(msg.find("out of range [1 .. 64]"), std::string::npos) << msg;
}

TEST(Config, BadChoiceSuggestsTheClosest) {
    std::string msg = load_error(test::platform("trn1"), {"dma.channel_release=on_acept"});
    EXPECT_NE(msg.find("--set dma.channel_release=on_acept"), std::string::npos) << msg;
    EXPECT_NE(msg.find("did you mean 'on_accept'"), std::string::npos) << msg;
}

TEST(Config, UnknownSectionIsAnError) {
    std::string msg = load_error(test::platform("trn1"), {"dmaa.channels=4"});
    EXPECT_NE(msg.find("unknown section 'dmaa'; did you mean 'dma'?"), std::string::npos) << msg;
}

TEST(Config, CrossSectionRuleBurstMustDivideInterleave) {
    std::string msg = load_error(test::platform("trn1"), {"dma.burst_size=3 KiB"});
    EXPECT_NE(msg.find("must divide hbm.interleave"), std::string::npos) << msg;
}

TEST(Config, SetOverridesAndEchoesEffectiveValue) {
    ConfigTree t = ConfigTree::from_file(test::platform("trn1"));
    t.set("dma.channels=4");
    t.set("hbm.controller_latency=30 ns");
    PlatformConfig c = PlatformConfig::load(t);
    EXPECT_EQ(c.dma.channels, 4u);
    EXPECT_DOUBLE_EQ(c.hbm.controller_latency.ns, 30);
    EXPECT_EQ(t.effective()["dma"]["channels"], 4);
    EXPECT_EQ(t.effective()["hbm"]["controller_latency"], "30 ns");
}

// A ConfigTree copy is a deep copy: YAML::Node copies share their tree, so the fuzzers' one base
// tree per input used to collect every input's keys (and slow down as it grew).
TEST(Config, SetOnACopyLeavesTheOriginalAlone) {
    ConfigTree base = ConfigTree::from_file(test::platform("trn1"));
    ConfigTree copy = base;
    copy.set("dma.channels=4");
    copy.set("newsection.key=1");
    ConfigTree assigned;
    assigned = base;
    assigned.set("hbm.controller_latency=30 ns");
    EXPECT_EQ(PlatformConfig::load(copy).dma.channels, 4u);
    EXPECT_NE(PlatformConfig::load(base).dma.channels, 4u);
    EXPECT_FALSE(base.root()["newsection"]);
    EXPECT_DOUBLE_EQ(PlatformConfig::load(assigned).hbm.controller_latency.ns, 30);
    EXPECT_NE(PlatformConfig::load(base).hbm.controller_latency.ns, 30);
    EXPECT_EQ(copy.where("dma", "channels"), "--set dma.channels=4");
    EXPECT_NE(base.where("dma", "channels").find("trn1.yaml:12:"), std::string::npos) << base.where("dma", "channels");
}

TEST(Config, MalformedSetIsAnError) {
    ConfigTree t = ConfigTree::from_file(test::platform("trn1"));
    EXPECT_THROW(t.set("channels=4"), ConfigError);
    EXPECT_THROW(t.set("dma.channels"), ConfigError);
}

TEST(Config, YamlSyntaxErrorNamesLine) {
    std::string f = test::temp_file("platform:\n  name: [x\n");
    EXPECT_NE(load_error(f).find(f + ":"), std::string::npos);
}

TEST(Config, DidYouMeanOnlyForCloseWords) {
    EXPECT_EQ(did_you_mean("chanels", {"channels", "queues"}), "channels");
    EXPECT_EQ(did_you_mean("zzzzzz", {"channels", "queues"}), "");
}
