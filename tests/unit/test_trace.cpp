// Trace writer, without a kernel: lanes for overlapping spans, no empty tracks, args and size in
// span names, flows linking the spans of one flow id, counters and derived bandwidth.
#include "models/common/trace.h"
#include "tests/support.h"

#include <fstream>
#include <gtest/gtest.h>
#include <algorithm>
#include <map>
#include <set>
#include <nlohmann/json.hpp>
#include <sstream>

using nlohmann::json;

namespace {

json write_and_load(const nctlm::Trace& t) {
    std::string path = nctlm::test::temp_file("", ".json");
    t.write(path);
    std::ifstream in(path);
    json j = json::parse(in);
    std::remove(path.c_str());
    return j;
}

std::map<std::pair<int, int>, std::string> thread_names(const json& j) {
    std::map<std::pair<int, int>, std::string> names;
    for (auto& e : j["traceEvents"])
        if (e["ph"] == "M" && e["name"] == "thread_name")
            names[{e["pid"].get<int>(), e["tid"].get<int>()}] = e["args"]["name"];
    return names;
}

} // namespace

TEST(Trace, PartiallyOverlappingSpansGoToLanesAndEmptyTracksAreDropped) {
    nctlm::Trace t;
    t.enable();
    int a = t.track("dma", "channel0");
    t.track("dma", "channel1");          // never used: must not appear
    t.track("idle_block", "lane");        // a whole process without events: must not appear
    t.span(a, "read", 0, 10);
    t.span(a, "read", 5, 15);             // overlaps the first partially: a second lane
    t.span(a, "read", 10, 20);            // fits after the first on lane 1
    json j = write_and_load(t);
    auto names = thread_names(j);
    std::set<std::string> shown;
    for (auto& [_, n] : names)
        shown.insert(n);
    EXPECT_EQ(shown, (std::set<std::string>{"channel0", "channel0 #2"}));
    for (auto& e : j["traceEvents"]) {
        if (e["ph"] == "M" && e["name"] == "process_name") {
            EXPECT_EQ(e["args"]["name"], "dma");
        }
    }
    // Per displayed track, spans are disjoint (touching allowed).
    std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> spans;
    for (auto& e : j["traceEvents"])
        if (e["ph"] == "X")
            spans[{e["pid"].get<int>(), e["tid"].get<int>()}].push_back(
                {e["ts"].get<double>(), e["ts"].get<double>() + e["dur"].get<double>()});
    ASSERT_EQ(spans.size(), 2u);
    for (auto& [key, v] : spans) {
        ASSERT_TRUE(names.count(key));
        std::sort(v.begin(), v.end());
        for (size_t i = 1; i < v.size(); ++i)
            EXPECT_GE(v[i].first, v[i - 1].second - 1e-9) << names[key];
    }
}

TEST(Trace, SpansCarryArgsAndTheirSizeInTheName) {
    nctlm::Trace t;
    t.enable();
    nctlm::SpanArgs a;
    a.command = "read";
    a.bytes = 2048;
    a.address = 0x1000;
    a.descriptor = 7;
    a.queue = 3;
    a.pc = 5;
    t.span(t.track("hbm0", "pc5"), "read", 0, 8, a);
    json j = write_and_load(t);
    json x;
    for (auto& e : j["traceEvents"])
        if (e["ph"] == "X")
            x = e;
    ASSERT_FALSE(x.is_null());
    EXPECT_EQ(x["name"], "read 2 KiB");
    EXPECT_EQ(x["args"]["bytes"], 2048);
    EXPECT_EQ(x["args"]["address"], "0x1000");
    EXPECT_EQ(x["args"]["descriptor"], 7);
    EXPECT_EQ(x["args"]["queue"], 3);
    EXPECT_EQ(x["args"]["pseudo_channel"], 5);
}

TEST(Trace, SpansOfOneFlowAreLinkedInTimeOrder) {
    nctlm::Trace t;
    t.enable();
    uint64_t flow = t.new_flow();
    ASSERT_NE(flow, 0u);
    nctlm::SpanArgs a;
    a.flow = flow;
    // Recorded out of time order, on three blocks: the flow still runs dma -> noc -> hbm.
    t.span(t.track("hbm0", "pc0"), "read", 20, 30, a);
    t.span(t.track("dma", "channel0"), "read", 0, 10, a);
    t.span(t.track("noc", "link0"), "read", 10, 20, a);
    t.span(t.track("dma", "channel1"), "other", 0, 5);  // no flow: no arrow
    json j = write_and_load(t);
    std::map<int, std::string> process;
    for (auto& e : j["traceEvents"])
        if (e["ph"] == "M" && e["name"] == "process_name")
            process[e["pid"]] = e["args"]["name"];
    std::vector<std::pair<std::string, std::string>> steps;  // (phase, process)
    std::set<uint64_t> ids;
    for (auto& e : j["traceEvents"])
        if (e["cat"] == "flow") {
            ids.insert(e["id"].get<uint64_t>());
            steps.push_back({e["ph"], process[e["pid"]]});
        }
    std::vector<std::pair<std::string, std::string>> want = {{"s", "dma"}, {"t", "noc"}, {"f", "hbm0"}};
    EXPECT_EQ(steps, want);
    EXPECT_EQ(ids.size(), 1u);
}

// A descriptor of two bursts: the instruction -> channel chain, and one chain per burst from the
// channel through its own hops (grouped by address), each under its own id.
TEST(Trace, EachBurstOfAFlowHasItsOwnChainFromTheChannel) {
    nctlm::Trace t;
    t.enable();
    uint64_t flow = t.new_flow();
    nctlm::SpanArgs whole;
    whole.flow = flow;
    t.span(t.track("pe", "sync"), "dma", 0, 100, whole);
    t.span(t.track("dma", "channel0"), "descriptor", 5, 15, whole);
    int link = t.track("noc", "link0"), pc = t.track("hbm0", "pc0"), data = t.track("dma", "data");
    for (uint64_t b = 0; b < 2; ++b) {
        nctlm::SpanArgs a;
        a.flow = flow;
        a.burst = true;
        a.address = 0x800 * b;
        double t0 = 10 + 50 * double(b);
        t.span(data, "burst in", t0 + 40, t0 + 50, a);  // recorded out of order
        t.span(link, "read request", t0, t0 + 2, a);
        t.span(pc, "read", t0 + 10, t0 + 20, a);
        t.span(link, "read data", t0 + 25, t0 + 35, a);
    }
    json j = write_and_load(t);
    std::map<int, std::string> process;
    for (auto& e : j["traceEvents"])
        if (e["ph"] == "M" && e["name"] == "process_name")
            process[e["pid"]] = e["args"]["name"];
    auto names = thread_names(j);
    std::map<uint64_t, std::vector<std::string>> chains;  // id -> "process/thread" per step
    for (auto& e : j["traceEvents"])
        if (e["cat"] == "flow")
            chains[e["id"].get<uint64_t>()].push_back(process[e["pid"]] + "/" +
                                                     names[{e["pid"].get<int>(), e["tid"].get<int>()}]);
    std::multiset<std::vector<std::string>> got;
    for (auto& [_, c] : chains)
        got.insert(c);
    std::vector<std::string> burst = {"dma/channel0", "noc/link0", "hbm0/pc0", "noc/link0", "dma/data"};
    EXPECT_EQ(got, (std::multiset<std::vector<std::string>>{{"pe/sync", "dma/channel0"}, burst, burst}));
}

TEST(Trace, CountersAndBandwidthAreWrittenAsCounterTracks) {
    nctlm::Trace t;
    t.enable();
    int q = t.counter("dma", "queue0 waiting");
    t.sample(q, 0, 1);
    t.sample(q, 10, 0);
    nctlm::SpanArgs a;
    a.bytes = 1000;
    t.span(t.track("dma", "data"), "read", 0, 100, a);  // 1000 B over 100 ns = 10 GB/s
    json j = write_and_load(t);
    std::vector<double> queue, bw;
    for (auto& e : j["traceEvents"])
        if (e["ph"] == "C") {
            if (e["name"] == "queue0 waiting")
                queue.push_back(e["args"]["value"]);
            if (e["name"] == "bandwidth (GB/s)")
                bw.push_back(e["args"]["value"]);
        }
    EXPECT_EQ(queue, (std::vector<double>{1, 0}));
    ASSERT_GT(bw.size(), 2u);
    EXPECT_NEAR(bw[0], 10.0, 1e-9);
    EXPECT_NEAR(bw[bw.size() / 2], 10.0, 1e-9);
    EXPECT_EQ(bw.back(), 0.0);
}

TEST(Trace, OldThreeArgumentSpansStillWork) {
    nctlm::Trace t;
    t.enable();
    t.span(t.track("pe", "tensor"), "matmul", 1, 2);
    json j = write_and_load(t);
    int spans = 0;
    for (auto& e : j["traceEvents"])
        if (e["ph"] == "X") {
            ++spans;
            EXPECT_EQ(e["name"], "matmul");
            EXPECT_EQ(e["args"]["command"], "matmul");
        }
    EXPECT_EQ(spans, 1);
}
