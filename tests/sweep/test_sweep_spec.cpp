// Sweep specs without running anything: ranges, grid/zip expansion, overrides, errors, the table.
#include "study/sweep_spec.h"

#include <algorithm>
#include <gtest/gtest.h>

using namespace nctlm;
using namespace nctlm::sweep;

namespace {
Spec parse(const std::string& text) { return Spec::parse(YAML::Load(text), "spec.yaml", "/specs"); }
std::string error_of(const std::string& text) {
    try {
        parse(text).points();
    } catch (const ConfigError& e) {
        return e.what();
    }
    return "";
}
} // namespace

TEST(SweepRange, LinearWithStep) {
    EXPECT_EQ(expand_range("8..64 step 8"), (std::vector<std::string>{"8", "16", "24", "32", "40", "48", "56", "64"}));
    EXPECT_EQ(expand_range("1..4"), (std::vector<std::string>{"1", "2", "3", "4"}));
    EXPECT_EQ(expand_range("0.5..1.5 step 0.25"),
              (std::vector<std::string>{"0.5", "0.75", "1", "1.25", "1.5"}));
    // The end is included only when a step lands on it.
    EXPECT_EQ(expand_range("1..10 step 4"), (std::vector<std::string>{"1", "5", "9"}));
}

TEST(SweepRange, GeometricWithUnits) {
    EXPECT_EQ(expand_range("100 GB/s..800 GB/s x2"),
              (std::vector<std::string>{"100 GB/s", "200 GB/s", "400 GB/s", "800 GB/s"}));
    EXPECT_EQ(expand_range("1..16 x2"), (std::vector<std::string>{"1", "2", "4", "8", "16"}));
    // Bytes come out canonical, and the ends may use different units of the same kind.
    EXPECT_EQ(expand_range("512 B..4 KiB x2"), (std::vector<std::string>{"512 B", "1 KiB", "2 KiB", "4 KiB"}));
    EXPECT_EQ(expand_range("1 KiB..3 KiB step 1 KiB"), (std::vector<std::string>{"1 KiB", "2 KiB", "3 KiB"}));
    EXPECT_EQ(expand_range("100 ns..1 us step 300 ns"),
              (std::vector<std::string>{"100 ns", "400 ns", "700 ns", "1000 ns"}));
}

TEST(SweepRange, Errors) {
    EXPECT_THROW(expand_range("8..4"), ConfigError);
    EXPECT_THROW(expand_range("1..4 step 0"), ConfigError);
    EXPECT_THROW(expand_range("1..4 x1"), ConfigError);
    EXPECT_THROW(expand_range("1 GB/s..4 KiB x2"), ConfigError);  // different kinds
    EXPECT_THROW(expand_range("1 furlong..4 furlong"), ConfigError);
    EXPECT_THROW(expand_range("a..b"), ConfigError);
}

TEST(SweepSpec, GridIsCartesianFirstAxisSlowest) {
    Spec s = parse(R"(
platform: p.yaml
testbench: b2b
set: {testbench.n: 4}
grid:
  dma.channels: [1, 2]
  dma.channel_release: [on_accept, on_response, on_accept]
)");
    auto pts = s.points();
    ASSERT_EQ(pts.size(), 6u);
    EXPECT_EQ(s.platform, "/specs/p.yaml");
    EXPECT_EQ(pts[0].id, "0000");
    EXPECT_EQ(pts[5].id, "0005");
    EXPECT_EQ(pts[1].axes, (KeyValues{{"dma.channels", "1"}, {"dma.channel_release", "on_response"}}));
    EXPECT_EQ(pts[3].axes, (KeyValues{{"dma.channels", "2"}, {"dma.channel_release", "on_accept"}}));
    // Base settings first, then the axes: a later --set wins.
    EXPECT_EQ(pts[3].sets,
              (std::vector<std::string>{"testbench.n=4", "dma.channels=2", "dma.channel_release=on_accept"}));
}

TEST(SweepSpec, ZipPairsListsAndNestsWithGrid) {
    Spec s = parse(R"(
platform: /abs/p.yaml
testbench: b2b
zip:
  dma.channels: [1, 2, 4]
  dma.queue_channels: "1..4 x2"
grid:
  testbench.n: [8, 16]
)");
    auto pts = s.points();
    ASSERT_EQ(pts.size(), 6u);
    EXPECT_EQ(s.axis_names(), (std::vector<std::string>{"dma.channels", "dma.queue_channels", "testbench.n"}));
    EXPECT_EQ(pts[4].axes,
              (KeyValues{{"dma.channels", "4"}, {"dma.queue_channels", "4"}, {"testbench.n", "8"}}));
    EXPECT_EQ(pts[3].axes,
              (KeyValues{{"dma.channels", "2"}, {"dma.queue_channels", "2"}, {"testbench.n", "16"}}));
}

TEST(SweepSpec, OverridesApplyToMatchingPointsOnly) {
    Spec s = parse(R"(
platform: p.yaml
testbench: b2b
grid:
  dma.channels: [1, 2]
overrides:
  - when: {dma.channels: 1}
    set: {dma.queues: 1, testbench.queue: 0}
)");
    auto pts = s.points();
    EXPECT_EQ(pts[0].sets, (std::vector<std::string>{"dma.channels=1", "dma.queues=1", "testbench.queue=0"}));
    EXPECT_EQ(pts[1].sets, (std::vector<std::string>{"dma.channels=2"}));
}

TEST(SweepSpec, WorkloadAxisPicksAFilePerPoint) {
    Spec s = parse(R"(
platform: p.yaml
testbench: gemm
grid:
  workload: [a.yaml, /w/b.yaml]
)");
    auto pts = s.points();
    ASSERT_EQ(pts.size(), 2u);
    EXPECT_EQ(pts[0].workload, "/specs/a.yaml");
    EXPECT_EQ(pts[1].workload, "/w/b.yaml");
    EXPECT_TRUE(pts[0].sets.empty());
}

TEST(SweepSpec, NoAxesIsOnePoint) {
    Spec s = parse("platform: p.yaml\ntestbench: probe\n");
    EXPECT_EQ(s.points().size(), 1u);
}

TEST(SweepSpec, ErrorsNameTheLineAndTheProblem) {
    std::string e = error_of("platform: p.yaml\ntestbench: b2b\ngird:\n  dma.channels: [1]\n");
    EXPECT_NE(e.find("spec.yaml:3:1"), std::string::npos) << e;
    EXPECT_NE(e.find("did you mean 'grid'"), std::string::npos) << e;

    e = error_of("platform: p.yaml\ntestbench: b2b\nzip:\n  dma.channels: [1, 2]\n  dma.queue_channels: [1]\n");
    EXPECT_NE(e.find("pair up"), std::string::npos) << e;

    e = error_of("platform: p.yaml\ntestbench: b2b\ngrid:\n  channels: [1, 2]\n");
    EXPECT_NE(e.find("section.key"), std::string::npos) << e;

    e = error_of("platform: p.yaml\ntestbench: b2b\ngrid:\n  dma.channels: [1]\n  dma.channels: [2]\n");
    EXPECT_FALSE(e.empty());

    e = error_of("testbench: b2b\n");
    EXPECT_NE(e.find("platform"), std::string::npos) << e;

    e = error_of("platform: p.yaml\ntestbench: b2b\ngrid:\n  dma.channels: [1]\noverrides:\n"
                 "  - when: {dma.queues: 1}\n    set: {dma.queues: 2}\n");
    EXPECT_NE(e.find("not an axis"), std::string::npos) << e;

    e = error_of("platform: p.yaml\ntestbench: b2b\ngrid:\n  dma.channels: \"8..1\"\n");
    EXPECT_NE(e.find("spec.yaml:4"), std::string::npos) << e;
}

TEST(SweepSpec, PlotAndTimeout) {
    Spec s = parse(R"(
platform: p.yaml
testbench: gemm
timeout: 90 s
plot: {x: workload.tiles, y: [efficiency, analytic_efficiency], hue: workload.k, logx: true}
)");
    EXPECT_DOUBLE_EQ(s.timeout_s, 90);
    ASSERT_EQ(s.plots.size(), 1u);
    EXPECT_EQ(s.plots[0].y, (std::vector<std::string>{"efficiency", "analytic_efficiency"}));
    EXPECT_TRUE(s.plots[0].logx);
    EXPECT_FALSE(s.plots[0].logy);
    EXPECT_DOUBLE_EQ(parse("platform: p\ntestbench: t\ntimeout: 5\n").timeout_s, 5);
}

TEST(SweepSlice, PartitionsThePoints) {
    Slice a = Slice::parse("1/3");
    EXPECT_TRUE(a.has(1));
    EXPECT_TRUE(a.has(4));
    EXPECT_FALSE(a.has(0));
    EXPECT_THROW(Slice::parse("3/3"), ConfigError);
    EXPECT_THROW(Slice::parse("x/3"), ConfigError);
    EXPECT_THROW(Slice::parse("1"), ConfigError);
}

TEST(SweepTable, FlattenHashAndCsv) {
    auto f = flatten(nlohmann::json::parse(R"({"a": {"b": 1, "c": {"d": "x"}}, "e": [1, 2]})"));
    EXPECT_EQ(f.dump(), R"({"a.b":1,"a.c.d":"x","e":[1,2]})");
    EXPECT_EQ(hash_hex("abc"), hash_hex("abc"));
    EXPECT_NE(hash_hex("abc"), hash_hex("abd"));
    EXPECT_EQ(hash_hex("").size(), 16u);
    EXPECT_EQ(typed("16").dump(), "16");
    EXPECT_EQ(typed("0.5").dump(), "0.5");
    EXPECT_EQ(typed("32 KiB").dump(), "\"32 KiB\"");
}

TEST(SweepTable, RowsSortedByPointAndColumnsUnited) {
    auto rec = [](size_t i, const char* status, nlohmann::ordered_json results) {
        nlohmann::ordered_json r = {{"id", std::to_string(i)}, {"index", i}, {"hash", "h"}, {"status", status},
                                    {"exit_code", 0}, {"axes", {{"dma.channels", std::to_string(i + 1)}}},
                                    {"results", results}, {"sim_time_ns", 1.0}, {"host_time_s", 0.1},
                                    {"point_host_time_s", 0.2}, {"error", ""}};
        return r;
    };
    Table t = make_table({"dma.channels"}, {rec(2, "ok", {{"ratio", 0.5}, {"x", 1}}), rec(0, "failed", {}),
                                            rec(1, "ok", {{"ratio", 0.7}, {"y", "z"}})});
    ASSERT_EQ(t.rows.size(), 3u);
    EXPECT_EQ(t.rows[0]["id"], "0");
    EXPECT_EQ(t.rows[2]["id"], "2");
    EXPECT_EQ(t.columns, (std::vector<std::string>{"id", "status", "exit_code", "dma.channels", "ratio", "y", "x",
                                                   "sim_time_ns", "host_time_s", "point_host_time_s", "hash", "error",
                                                   "simulated_ns", "sim_wall_s", "point_wall_s"}));
    EXPECT_TRUE(t.rows[0]["ratio"].is_null());
    EXPECT_EQ(t.rows[1]["dma.channels"], 2);
    std::string csv = to_csv(t);
    EXPECT_EQ(csv.substr(0, csv.find('\n')),
              "id,status,exit_code,dma.channels,ratio,y,x,sim_time_ns,host_time_s,point_host_time_s,hash,error,"
              "simulated_ns,sim_wall_s,point_wall_s");
    EXPECT_NE(csv.find("\n1,ok,0,2,0.7,z,,1.0,0.1,0.2,h,,1.0,0.1,0.2\n"), std::string::npos) << csv;
    EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 4);
    std::string jsonl = to_jsonl(t);
    EXPECT_EQ(std::count(jsonl.begin(), jsonl.end(), '\n'), 3);
}

TEST(SweepSpec, CasesAreOneAxisOfLabelledSettings) {
    Spec s = parse(R"(
platform: p.yaml
testbench: probe
set: {testbench.bytes: 4 KiB}
grid:
  dma.channels: [1, 2]
cases:
  - {case: base}
  - {case: hop-up, set: {noc.hop_cycles: 9, noc.clock: 1 GHz}}
)");
    auto pts = s.points();
    ASSERT_EQ(pts.size(), 4u);
    EXPECT_EQ(s.axis_names(), (std::vector<std::string>{"dma.channels", "case"}));
    EXPECT_EQ(pts[0].axes, (KeyValues{{"dma.channels", "1"}, {"case", "base"}}));
    EXPECT_EQ(pts[0].sets, (std::vector<std::string>{"testbench.bytes=4 KiB", "dma.channels=1"}));
    EXPECT_EQ(pts[3].sets, (std::vector<std::string>{"testbench.bytes=4 KiB", "dma.channels=2", "noc.hop_cycles=9",
                                                     "noc.clock=1 GHz"}));
    EXPECT_NE(error_of("platform: p\ntestbench: t\ncases:\n  - {case: a}\n  - {case: a}\n").find("appears twice"),
              std::string::npos);
    EXPECT_NE(error_of("platform: p\ntestbench: t\ncases:\n  - {set: {a.b: 1}}\n").find("needs `case"),
              std::string::npos);
}

TEST(SweepSpec, CountPointsWithoutBuildingThem) {
    Spec s = parse("platform: p\ntestbench: t\ngrid:\n  a.b: \"1..1000\"\n  a.c: \"1..1000\"\n  a.d: \"1..1000\"\n");
    EXPECT_EQ(s.count_points(), 1000000000u);
    Spec t = parse("platform: p\ntestbench: t\ngrid:\n  a.b: [1, 2, 3]\n");
    EXPECT_EQ(t.count_points(), 3u);
}

TEST(SweepSpec, PathsFromASpecStayInsideTheOutputDirectory) {
    EXPECT_TRUE(inside_output("plot.png"));
    EXPECT_TRUE(inside_output("plots/a.png"));
    EXPECT_TRUE(inside_output("a/../b.png"));
    EXPECT_FALSE(inside_output("../a.png"));
    EXPECT_FALSE(inside_output("a/../../b.png"));
    EXPECT_FALSE(inside_output("/tmp/a.png"));
    EXPECT_FALSE(inside_output(""));
    auto fails = [](const std::string& text, const std::string& part) {
        try {
            parse(text);
            ADD_FAILURE() << "accepted: " << text;
        } catch (const nctlm::ConfigError& e) {
            EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
        }
    };
    fails("name: ../../evil\nplatform: p.yaml\ntestbench: probe\n", "spec.yaml:1:7: name '../../evil' must be a plain");
    fails("name: a/b\nplatform: p.yaml\ntestbench: probe\n", "must be a plain name");
    fails("platform: p.yaml\ntestbench: probe\nplot: {x: a, y: b, file: ../x.png}\n",
          "spec.yaml:3:26: plot.file '../x.png' must be a relative path inside the output directory");
}

TEST(SweepSpec, MarksLocateWhatTheSpecNames) {
    Spec s = parse("platform: p.yaml\ntestbench: probe\nset: {dma.queues: 2}\ngrid:\n  dma.channels: [1, 2]\n"
                   "plot: {x: dma.channels, y: [ratio, wall]}\n");
    EXPECT_EQ(s.at("testbench"), "spec.yaml:2:12");
    EXPECT_EQ(s.at("dma.queues"), "spec.yaml:3:7");
    EXPECT_EQ(s.at("dma.channels"), "spec.yaml:5:3");
    EXPECT_EQ(s.at("plot0.x"), "spec.yaml:6:11");
    EXPECT_EQ(s.at("plot0.y1"), "spec.yaml:6:36");
    EXPECT_EQ(s.at("nothing"), "spec.yaml");  // the file as given
}

TEST(SweepSpec, ABareNameIsAShippedConfig) {
    Spec s = parse("platform: trn1\ntestbench: probe\nworkload: gemm_32x3072x32\n");
    EXPECT_EQ(s.platform, "trn1");
    EXPECT_EQ(s.workload, "gemm_32x3072x32");
}
