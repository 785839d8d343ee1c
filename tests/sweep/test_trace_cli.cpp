// --trace through the CLI: a Chrome/Perfetto trace-event file whose spans are well formed per
// track (nested or disjoint, starts in order), bounded by --trace-window and --trace-max-events,
// and readable: args on every hop, one flow per descriptor across DMA, NoC and HBM tracks, no
// partial overlaps, no empty tracks, occupancy and bandwidth counters.
#include "tests/sweep/sweep_test_util.h"

#include <algorithm>
#include <gtest/gtest.h>
#include <map>
#include <regex>
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

namespace {

// Which hop a track shows, from its "process/thread" name: the DMA's channels and data
// engines, the NoC's links, the HBM's pseudo-channels, the PE's units ("" for anything else).
std::string hop(const std::string& track) {
    auto slash = track.find('/');
    std::string process = track.substr(0, slash), thread = track.substr(slash + 1);
    auto ends = [&](const char* suffix) {
        std::string s(suffix);
        return process.size() >= s.size() && process.compare(process.size() - s.size(), s.size(), s) == 0;
    };
    if (ends(".dma") && thread.rfind("channel", 0) == 0)
        return "dma channel";
    if (ends(".dma") && thread.rfind("data", 0) == 0)
        return "dma data";
    if (ends(".noc"))
        return "noc link";
    if (process.find(".hbm") != std::string::npos && thread.rfind("pc", 0) == 0)
        return "hbm pc";
    if (ends(".pe"))
        return "pe";
    return "";
}

// Every displayed track: spans disjoint (touching allowed; lanes take what overlaps), no track or
// process without events.
void check_readable_tracks(const Trace& t) {
    for (auto& [key, spans] : t.tracks) {
        std::vector<Span> v = spans;
        std::sort(v.begin(), v.end(), [](const Span& a, const Span& b) { return a.start < b.start; });
        for (size_t i = 1; i < v.size(); ++i)
            ASSERT_GE(v[i].start, v[i - 1].end - 1e-6) << t.names.at(key) << ": spans " << i - 1 << " and " << i
                                                       << " partially overlap";
    }
    for (auto& [key, name] : t.names)
        EXPECT_TRUE(t.tracks.count(key)) << "empty track " << name;
    std::set<int> pids_with_events;
    for (auto& e : t.doc["traceEvents"])
        if (e["ph"] != "M")
            pids_with_events.insert(e["pid"].get<int>());
    for (auto& e : t.doc["traceEvents"])
        if (e["ph"] == "M" && e["name"] == "process_name") {
            EXPECT_TRUE(pids_with_events.count(e["pid"].get<int>())) << "empty process " << e["args"]["name"];
        }
}

struct Flows {
    std::map<uint64_t, std::set<std::pair<int, int>>> tracks;      // flow id -> tracks its spans are on
    std::map<uint64_t, std::map<std::string, double>> first_start;  // flow id -> hop -> its first span's start
    std::map<uint64_t, std::map<std::string, std::string>> first_name;
};

Flows flows_of(const Trace& t) {
    Flows f;
    for (auto& e : t.doc["traceEvents"]) {
        if (e["ph"] != "X" || !e["args"].contains("flow"))
            continue;
        std::pair<int, int> key{e["pid"].get<int>(), e["tid"].get<int>()};
        uint64_t id = e["args"]["flow"];
        f.tracks[id].insert(key);
        std::string h = hop(t.names.at(key));
        double start = e["ts"].get<double>() * 1e3;
        if (!f.first_start[id].count(h) || start < f.first_start[id][h]) {
            f.first_start[id][h] = start;
            f.first_name[id][h] = e["name"];
        }
    }
    return f;
}

// The chains of flow events ("s", "t"..., "f" under one id): each step binds to a span of a
// displayed track (its time inside the span), starts once and finishes once. Returns each
// chain's hops in order, joined by " > " ("dma channel > noc link > ...").
std::vector<std::string> flow_chains(const Trace& t) {
    std::map<uint64_t, std::string> phases, hops;
    for (auto& e : t.doc["traceEvents"]) {
        std::string ph = e["ph"];
        if (ph != "s" && ph != "t" && ph != "f")
            continue;
        std::pair<int, int> key{e["pid"].get<int>(), e["tid"].get<int>()};
        EXPECT_TRUE(t.tracks.count(key)) << e.dump();
        if (!t.tracks.count(key))
            continue;
        double ts = e["ts"].get<double>() * 1e3;
        auto& spans = t.tracks.at(key);
        EXPECT_TRUE(std::any_of(spans.begin(), spans.end(),
                                [&](const Span& s) { return s.start - 1e-6 <= ts && ts <= s.end + 1e-6; }))
            << "flow step outside any span: " << e.dump();
        uint64_t id = e["id"];
        phases[id] += ph;
        hops[id] += (hops[id].empty() ? "" : " > ") + hop(t.names.at(key));
    }
    std::vector<std::string> chains;
    for (auto& [id, ph] : phases) {
        EXPECT_EQ(ph.front(), 's') << "flow " << id;
        EXPECT_EQ(ph.back(), 'f') << "flow " << id;
        EXPECT_EQ(std::count(ph.begin(), ph.end(), 's') + std::count(ph.begin(), ph.end(), 'f'), 2) << "flow " << id;
        chains.push_back(hops[id]);
    }
    return chains;
}

// One read burst's chain: its DMA channel, the request's NoC links, the HBM pseudo-channel, the
// data's NoC links, the DMA data engine.
bool is_read_burst_chain(const std::string& chain) {
    static const std::regex path("dma channel( > noc link)+ > hbm pc( > noc link)+ > dma data");
    return std::regex_match(chain, path);
}

} // namespace

// What a person opening the trace needs: spans named with their size and carrying args, every
// listed track non-empty, one descriptor's spans linked by a flow across the DMA channel, the NoC
// links, the HBM pseudo-channel and the DMA's data engine, in that order, counter tracks for queue
// occupancy and bandwidth, and no partial overlaps on a track.
TEST(TraceCli, B2bTraceIsReadable) {
    std::string file = temp_file("", ".json");
    auto r = run_cli("run -p " + platform("trn1") + " -t b2b --set testbench.n=16 -q --trace " + file);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    Trace t = load(file);
    check_well_formed(t);
    check_readable_tracks(t);
    std::map<std::string, size_t> spans_at;  // hop -> spans
    std::set<int> bandwidth_pids;
    std::set<std::string> counters;
    for (auto& e : t.doc["traceEvents"]) {
        if (e["ph"] == "C") {
            counters.insert(e["name"].get<std::string>());
            if (e["name"] == "bandwidth (GB/s)")
                bandwidth_pids.insert(e["pid"].get<int>());
        }
        if (e["ph"] != "X")
            continue;
        std::string h = hop(t.names[{e["pid"].get<int>(), e["tid"].get<int>()}]);
        ++spans_at[h];
        EXPECT_NE(e["name"], "read") << "a span named only 'read'";
        if (h.empty() || h == "pe")
            continue;
        const json& a = e["args"];
        // Every hop of a burst says what it moves, where, and for which descriptor and flow.
        for (const char* k : {"command", "bytes", "address", "descriptor", "flow", "tile"})
            EXPECT_TRUE(a.contains(k)) << h << " span without " << k << ": " << e.dump();
        if (h == "hbm pc") {
            EXPECT_TRUE(a.contains("pseudo_channel")) << e.dump();
        }
    }
    EXPECT_GT(spans_at["dma channel"], 16u);
    EXPECT_GT(spans_at["noc link"], 2 * spans_at["dma channel"]);  // a request and a response route each
    EXPECT_GT(spans_at["hbm pc"], 16u);
    // Every descriptor (1 single + 16 batched) has its own flow, from its channel through a NoC
    // link and an HBM pseudo-channel back to the data engine, in that order.
    Flows f = flows_of(t);
    EXPECT_EQ(f.tracks.size(), 17u);
    for (auto& [id, tracks] : f.tracks) {
        EXPECT_GE(tracks.size(), 4u) << "flow " << id;
        auto& at = f.first_start[id];
        for (const char* h : {"dma channel", "noc link", "hbm pc", "dma data"})
            ASSERT_TRUE(at.count(h)) << "flow " << id << " never reaches the " << h;
        EXPECT_LE(at["dma channel"], at["noc link"]) << "flow " << id;
        EXPECT_LT(at["noc link"], at["hbm pc"]) << "flow " << id;
        EXPECT_LT(at["hbm pc"], at["dma data"]) << "flow " << id;
        EXPECT_EQ(f.first_name[id]["noc link"].rfind("read request", 0), 0u) << f.first_name[id]["noc link"];
    }
    // And each burst (17 descriptors x 16 bursts) on a chain of its own through every hop.
    std::vector<std::string> chains = flow_chains(t);
    EXPECT_EQ(chains.size(), spans_at["dma data"]);
    EXPECT_EQ(spans_at["dma data"], 17u * 16u);
    for (auto& c : chains)
        EXPECT_TRUE(is_read_burst_chain(c)) << c;
    EXPECT_TRUE(counters.count("queue0 waiting")) << "no DMA queue occupancy counter";
    EXPECT_TRUE(counters.count("pc0 read queue")) << "no HBM read-queue occupancy counter";
    EXPECT_TRUE(counters.count("stack0 port credits in use")) << "no NoC port credit counter";
    EXPECT_TRUE(counters.count("bandwidth (GB/s)")) << "no bandwidth counter";
    // Bandwidth for the DMA engine, the NoC and the HBM stack at least.
    std::set<std::string> with_bandwidth;
    std::map<int, std::string> process;
    for (auto& e : t.doc["traceEvents"])
        if (e["ph"] == "M" && e["name"] == "process_name")
            process[e["pid"]] = e["args"]["name"];
    for (int pid : bandwidth_pids)
        with_bandwidth.insert(process[pid]);
    auto has = [&](const char* part) {
        return std::any_of(with_bandwidth.begin(), with_bandwidth.end(),
                           [&](const std::string& p) { return p.find(part) != std::string::npos; });
    };
    EXPECT_TRUE(has(".dma") && has(".noc") && has(".hbm")) << "bandwidth counters missing";
    std::remove(file.c_str());
}

// The GEMM pipeline's PE tracks overlap heavily (DMA instructions in flight together): lanes
// keep every displayed track free of partial overlaps. A DMA instruction's flow runs from the
// PE through the DMA, the NoC and the HBM.
TEST(TraceCli, GemmTraceHasNoPartialOverlaps) {
    std::string file = temp_file("", ".json");
    auto r = run_cli("run -p " + platform("trn1") + " -t gemm -w " +
                     nctlm::test::source_path("configs/workloads/gemm_32x3072x32.yaml") + " -q --trace " + file);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    Trace t = load(file);
    ASSERT_GT(t.spans, 0u);
    check_readable_tracks(t);
    Flows f = flows_of(t);
    size_t end_to_end = 0;
    for (auto& [id, at] : f.first_start)
        end_to_end += at.count("pe") && at.count("dma channel") && at.count("noc link") && at.count("hbm pc") &&
                      at.count("dma data");
    EXPECT_GT(end_to_end, 0u) << "no flow from a PE instruction to the HBM and back";
    std::vector<std::string> chains = flow_chains(t);
    size_t instruction_to_channel = 0, read_bursts = 0;
    for (auto& c : chains) {
        instruction_to_channel += c.rfind("pe > dma channel", 0) == 0;
        read_bursts += is_read_burst_chain(c);
    }
    EXPECT_GT(instruction_to_channel, 0u);
    EXPECT_GT(read_bursts, 0u);
    std::remove(file.c_str());
}

// Two tiles streaming through reused descriptor slots: each post is a flow of its own (a slot's
// earlier flow id is not carried over), and every burst's chain runs channel -> NoC -> HBM -> data.
static void expect_stream_trace_links_every_burst(const std::string& timing) {
    std::string file = temp_file("", ".json");
    auto r = run_cli("run -p " + platform("trn1") + " -t stream --set testbench.bytes_per_tile='1 MiB' "
                     "--set testbench.in_flight=4 --timing " + timing + " -q --trace " + file);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    Trace t = load(file);
    check_well_formed(t);
    check_readable_tracks(t);
    size_t descriptors = 0, data = 0;
    for (auto& [key, spans] : t.tracks) {
        descriptors += hop(t.names.at(key)) == "dma channel" ? spans.size() : 0;
        data += hop(t.names.at(key)) == "dma data" ? spans.size() : 0;
    }
    EXPECT_EQ(descriptors, 2u * 32u);  // 2 tiles x 1 MiB / 32 KiB
    EXPECT_EQ(data, descriptors * 16);  // 2 KiB bursts
    EXPECT_EQ(flows_of(t).tracks.size(), descriptors);
    std::vector<std::string> chains = flow_chains(t);
    EXPECT_EQ(chains.size(), data);
    for (auto& c : chains)
        EXPECT_TRUE(is_read_burst_chain(c)) << c;
    std::remove(file.c_str());
}

TEST(TraceCli, StreamTraceLinksEveryBurstOfEveryPost) { expect_stream_trace_links_every_burst("at"); }

// The loosely-timed path traces the same hops with the same flows.
TEST(TraceCli, StreamTraceLinksEveryBurstOfEveryPostUnderLt) { expect_stream_trace_links_every_burst("lt"); }

// --progress prints simulated time and speed only on a terminal; a pipe gets no progress noise.
TEST(TraceCli, ProgressIsQuietWithoutATerminal) {
    auto r = run_cli("run -p " + platform("tiny") + " -t b2b --progress -q");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err.find("[nctlm] simulated"), std::string::npos) << r.err;
}
