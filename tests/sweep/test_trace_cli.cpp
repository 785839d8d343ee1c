// --trace through the CLI: a Chrome/Perfetto trace-event file whose spans are well formed per
// track (nested or disjoint, starts in order), bounded by --trace-window and --trace-max-events.
#include "tests/sweep/sweep_test_util.h"

#include <algorithm>
#include <gtest/gtest.h>
#include <map>
#include <set>

using namespace nctlm::test;
using nlohmann::json;

namespace {

struct Span {
    double start, end;
};

struct Trace {
    json doc;
    std::map<std::pair<int, int>, std::vector<Span>> tracks;  // (pid, tid) -> spans in file order
    std::map<std::pair<int, int>, std::string> names;          // (pid, tid) -> "process/thread"
    size_t spans = 0;
};

Trace load(const std::string& path) {
    Trace t;
    t.doc = json::parse(read_file(path));
    std::map<int, std::string> process;
    for (auto& e : t.doc["traceEvents"])
        if (e["ph"] == "M" && e["name"] == "process_name")
            process[e["pid"]] = e["args"]["name"];
    for (auto& e : t.doc["traceEvents"]) {
        std::pair<int, int> key{e["pid"].get<int>(), e.value("tid", 0)};
        if (e["ph"] == "M" && e["name"] == "thread_name")
            t.names[key] = process[key.first] + "/" + e["args"]["name"].get<std::string>();
        if (e["ph"] == "X") {
            double ts = e["ts"], dur = e["dur"];
            t.tracks[key].push_back({ts * 1e3, (ts + dur) * 1e3});  // us -> ns
            ++t.spans;
        }
    }
    return t;
}

// Spans on one track: starts never go back, and two spans either nest or do not overlap.
void check_well_formed(const Trace& t) {
    const double eps = 1e-6;  // ns; the file keeps ps precision
    for (auto& [key, spans] : t.tracks) {
        std::string name = t.names.count(key) ? t.names.at(key) : "?";
        std::vector<Span> open;  // the stack of enclosing spans
        for (size_t i = 0; i < spans.size(); ++i) {
            const Span& s = spans[i];
            ASSERT_GE(s.end, s.start - eps) << name << " span " << i;
            if (i) {
                ASSERT_GE(s.start, spans[i - 1].start - eps) << name << ": span " << i << " starts before span " << i - 1;
            }
            while (!open.empty() && open.back().end <= s.start + eps)
                open.pop_back();
            if (!open.empty()) {
                ASSERT_LE(s.end, open.back().end + eps)
                    << name << ": span " << i << " [" << s.start << ", " << s.end << "] overlaps ["
                    << open.back().start << ", " << open.back().end << "] without nesting in it";
            }
            open.push_back(s);
        }
    }
}

} // namespace

TEST(TraceCli, B2bTraceHasWellFormedTracksForDmaNocAndHbm) {
    std::string file = temp_file("", ".json");
    auto r = run_cli("run -p " + platform("trn1") + " -t b2b --set testbench.n=16 --trace " + file);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    Trace t = load(file);
    ASSERT_GT(t.spans, 16u);
    EXPECT_EQ(t.doc["otherData"]["dropped_events"], 0);
    bool dma = false, noc = false, hbm = false;
    for (auto& [_, name] : t.names) {
        dma = dma || name.find("dma") != std::string::npos;
        noc = noc || name.find("noc") != std::string::npos;
        hbm = hbm || name.find("hbm") != std::string::npos;
    }
    EXPECT_TRUE(dma && noc && hbm) << "tracks: " << [&] {
        std::string all;
        for (auto& [_, n] : t.names)
            all += n + " ";
        return all;
    }();
    check_well_formed(t);
    std::remove(file.c_str());
}

TEST(TraceCli, WindowKeepsOnlySpansThatTouchIt) {
    std::string full = temp_file("", ".json"), part = temp_file("", ".json");
    std::string base = "run -p " + platform("trn1") + " -t b2b --set testbench.n=16 -q --trace ";
    ASSERT_EQ(run_cli(base + full).exit_code, 0);
    auto r = run_cli(base + part + " --trace-window '300 ns..500 ns'");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    Trace a = load(full), b = load(part);
    size_t inside = 0;
    for (auto& [_, spans] : a.tracks)
        for (auto& s : spans)
            inside += s.end >= 300 && s.start <= 500;
    EXPECT_GT(inside, 0u);
    EXPECT_LT(inside, a.spans);  // the window is a real cut
    EXPECT_EQ(b.spans, inside);
    for (auto& [_, spans] : b.tracks)
        for (auto& s : spans) {
            EXPECT_GE(s.end, 300 - 1e-6);
            EXPECT_LE(s.start, 500 + 1e-6);
        }
    check_well_formed(b);
    std::remove(full.c_str());
    std::remove(part.c_str());
}

TEST(TraceCli, EventCapBoundsTheFileAndCountsTheRest) {
    std::string full = temp_file("", ".json"), capped = temp_file("", ".json");
    std::string base = "run -p " + platform("trn1") + " -t b2b --set testbench.n=16 -q --trace ";
    ASSERT_EQ(run_cli(base + full).exit_code, 0);
    ASSERT_EQ(run_cli(base + capped + " --trace-max-events 10").exit_code, 0);
    Trace a = load(full), b = load(capped);
    ASSERT_GT(a.spans, 10u);
    EXPECT_EQ(b.spans, 10u);
    EXPECT_EQ(b.doc["otherData"]["dropped_events"].get<size_t>(), a.spans - 10);
    check_well_formed(b);
    auto bad = run_cli(base + capped + " --trace-window 'soon..later'");
    EXPECT_EQ(bad.exit_code, 2) << bad.err;
    std::remove(full.c_str());
    std::remove(capped.c_str());
}

// What a person opening the trace needs: spans named with their size and carrying args, every
// listed track non-empty, one descriptor's spans linked by a flow across tracks, counter tracks
// for queue occupancy and bandwidth, and (checked above) no partial overlaps on a track.
TEST(TraceCli, B2bTraceIsReadable) {
    std::string file = temp_file("", ".json");
    auto r = run_cli("run -p " + platform("trn1") + " -t b2b --set testbench.n=16 -q --trace " + file);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    Trace t = load(file);
    check_well_formed(t);
    for (auto& [key, name] : t.names)
        EXPECT_TRUE(t.tracks.count(key)) << "empty track " << name;
    size_t dma_spans = 0;
    std::map<uint64_t, std::set<std::pair<int, int>>> flow_tracks;  // flow id -> tracks its spans are on
    std::set<std::string> counters;
    for (auto& e : t.doc["traceEvents"]) {
        if (e["ph"] == "C")
            counters.insert(e["name"].get<std::string>());
        if (e["ph"] != "X")
            continue;
        std::string name = t.names[{e["pid"].get<int>(), e["tid"].get<int>()}];
        if (name.find(".dma/") != std::string::npos) {
            ++dma_spans;
            EXPECT_TRUE(e["args"].contains("bytes") && e["args"].contains("address") && e["args"].contains("descriptor"))
                << e.dump();
            EXPECT_NE(e["name"], "read") << "a span named only 'read'";
        }
        if (e["args"].contains("flow"))
            flow_tracks[e["args"]["flow"].get<uint64_t>()].insert({e["pid"].get<int>(), e["tid"].get<int>()});
    }
    EXPECT_GT(dma_spans, 16u);
    // Every descriptor (1 single + 16 batched) has its own flow, spanning the channel and data tracks.
    EXPECT_EQ(flow_tracks.size(), 17u);
    for (auto& [id, tracks] : flow_tracks)
        EXPECT_GE(tracks.size(), 2u) << "flow " << id;
    size_t flow_starts = 0, flow_ends = 0;
    for (auto& e : t.doc["traceEvents"]) {
        flow_starts += e["ph"] == "s";
        flow_ends += e["ph"] == "f";
    }
    EXPECT_EQ(flow_starts, 17u);
    EXPECT_EQ(flow_ends, 17u);
    EXPECT_TRUE(counters.count("queue0 waiting")) << "no queue occupancy counter";
    EXPECT_TRUE(counters.count("bandwidth (GB/s)")) << "no bandwidth counter";
    std::remove(file.c_str());
}

// The GEMM pipeline's PE tracks overlap heavily (DMA instructions in flight together): lanes
// keep every displayed track free of partial overlaps.
TEST(TraceCli, GemmTraceHasNoPartialOverlaps) {
    std::string file = temp_file("", ".json");
    auto r = run_cli("run -p " + platform("trn1") + " -t gemm -w " +
                     nctlm::test::source_path("configs/workloads/gemm_32x3072x32.yaml") + " -q --trace " + file);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    Trace t = load(file);
    ASSERT_GT(t.spans, 0u);
    for (auto& [key, spans] : t.tracks) {
        std::vector<Span> v = spans;
        std::sort(v.begin(), v.end(), [](const Span& a, const Span& b) { return a.start < b.start; });
        for (size_t i = 1; i < v.size(); ++i)
            ASSERT_GE(v[i].start, v[i - 1].end - 1e-6) << t.names[key] << ": spans " << i - 1 << " and " << i << " overlap";
    }
    for (auto& [key, name] : t.names)
        EXPECT_TRUE(t.tracks.count(key)) << "empty track " << name;
    std::remove(file.c_str());
}

// --progress prints simulated time and speed only on a terminal; a pipe gets no progress noise.
TEST(TraceCli, ProgressIsQuietWithoutATerminal) {
    auto r = run_cli("run -p " + platform("tiny") + " -t b2b --progress -q");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err.find("[nctlm] simulated"), std::string::npos) << r.err;
}
