// Traces that obey causality (issue 23): for every testbench, the trace file's flow steps go
// forward in time (Perfetto's importer drops a step earlier than the one before it), each step
// sits inside the span it binds to, and a read burst's spans follow its data: the response links
// and the DMA's "burst in" start no earlier than the pseudo-channel's read and end no earlier
// than its last byte (a link cannot carry data the PC has not produced yet). Also the size
// warning of a large trace.
#include "tests/sweep/sweep_test_util.h"

#include <algorithm>
#include <gtest/gtest.h>
#include <map>

using namespace nctlm::test;
using nlohmann::json;

namespace {

constexpr double kEps = 1.5e-3;  // ns: the file keeps ps; a step may bind 1 ps into its span

struct Span {
    int pid, tid;
    std::string name;
    double start, end;  // ns
    json args;
};

struct Step {
    std::string ph;
    int pid, tid;
    double ts;  // ns
};

struct TraceFile {
    std::vector<Span> spans;
    std::map<uint64_t, std::vector<Step>> flows;  // chain id -> steps in file order
};

TraceFile load(const std::string& path) {
    TraceFile t;
    json doc = json::parse(read_file(path));
    for (auto& e : doc["traceEvents"]) {
        std::string ph = e["ph"];
        if (ph == "X")
            t.spans.push_back({e["pid"], e["tid"], e["name"], e["ts"].get<double>() * 1e3,
                               (e["ts"].get<double>() + e["dur"].get<double>()) * 1e3, e["args"]});
        else if (ph == "s" || ph == "t" || ph == "f")
            t.flows[e["id"].get<uint64_t>()].push_back({ph, e["pid"], e["tid"], e["ts"].get<double>() * 1e3});
    }
    return t;
}

std::string run_traced(const std::string& args) {
    std::string file = temp_file("", ".json");
    auto r = run_cli(args + " -q --trace " + file);
    EXPECT_EQ(r.exit_code, 0) << args << "\n" << r.err;
    return file;
}

// Every flow: s, then t..., then f; steps never go back in time; each inside a span of its track.
void expect_flows_forward_in_time(const TraceFile& t, const std::string& what) {
    std::map<std::pair<int, int>, std::vector<const Span*>> by_track;
    for (auto& s : t.spans)
        by_track[{s.pid, s.tid}].push_back(&s);
    ASSERT_FALSE(t.flows.empty()) << what << ": no flows";
    size_t backwards = 0, unbound = 0;
    for (auto& [id, steps] : t.flows) {
        ASSERT_GE(steps.size(), 2u) << what << " flow " << id;
        EXPECT_EQ(steps.front().ph, "s") << what << " flow " << id;
        EXPECT_EQ(steps.back().ph, "f") << what << " flow " << id;
        for (size_t k = 0; k < steps.size(); ++k) {
            if (k && steps[k].ts < steps[k - 1].ts - 1e-9)
                ++backwards;
            auto& spans = by_track[{steps[k].pid, steps[k].tid}];
            bool inside = std::any_of(spans.begin(), spans.end(), [&](const Span* s) {
                return s->start - kEps <= steps[k].ts && steps[k].ts <= s->end + kEps;
            });
            unbound += !inside;
        }
    }
    EXPECT_EQ(backwards, 0u) << what << ": flow steps earlier than the step before them";
    EXPECT_EQ(unbound, 0u) << what << ": flow steps outside every span of their track";
}

// A read burst's hops in data order: the PC's read, then the response links and the DMA's
// "burst in", none starting before the PC's first byte nor ending before its last.
void expect_read_data_after_the_pc(const TraceFile& t, const std::string& what, size_t at_least) {
    struct Burst {
        std::vector<const Span*> pc, links, dma;
    };
    std::map<std::pair<uint64_t, std::string>, Burst> bursts;  // (flow, address)
    for (auto& s : t.spans) {
        if (!s.args.contains("flow") || !s.args.contains("address") || s.args.value("command", "") != "read")
            continue;
        auto key = std::make_pair(s.args["flow"].get<uint64_t>(), s.args["address"].get<std::string>());
        if (s.args.contains("pseudo_channel"))
            bursts[key].pc.push_back(&s);
        else if (s.name.rfind("read data", 0) == 0)
            bursts[key].links.push_back(&s);
        else if (s.name.rfind("burst in", 0) == 0)
            bursts[key].dma.push_back(&s);
    }
    size_t checked = 0, early = 0;
    std::string example;
    for (auto& [key, b] : bursts) {
        if (b.pc.size() != 1)  // a flow reading one address twice: no pairing to check
            continue;
        const Span& pc = *b.pc.front();
        for (auto* hops : {&b.links, &b.dma})
            for (const Span* s : *hops) {
                ++checked;
                if (s->start < pc.start - kEps || s->end < pc.end - kEps) {
                    ++early;
                    if (example.empty())
                        example = s->name + " [" + std::to_string(s->start) + ", " + std::to_string(s->end) +
                                  "] vs PC read [" + std::to_string(pc.start) + ", " + std::to_string(pc.end) + "]";
                }
            }
        double last_link = 0;
        for (const Span* s : b.links)
            last_link = std::max(last_link, s->end);
        for (const Span* s : b.dma)
            if (s->end < last_link - kEps) {
                ++early;
                if (example.empty())
                    example = "burst in ends at " + std::to_string(s->end) + " before its data's last link " +
                              std::to_string(last_link);
            }
    }
    EXPECT_GE(checked, at_least) << what;
    EXPECT_EQ(early, 0u) << what << ": " << example;
}

void expect_causal(const std::string& args, size_t reads) {
    TraceFile t = load(run_traced(args));
    expect_flows_forward_in_time(t, args);
    expect_read_data_after_the_pc(t, args, reads);
}

} // namespace

TEST(TraceCausality, Probe) { expect_causal("run -p trn1 -t probe", 16); }
TEST(TraceCausality, ProbeOnThePipeModel) { expect_causal("run -p trn1 -t probe --set hbm.model=pipe", 16); }
TEST(TraceCausality, ProbeUnderLt) { expect_causal("run -p trn1 -t probe --timing lt", 16); }
TEST(TraceCausality, B2b) { expect_causal("run -p trn1 -t b2b --set testbench.n=8", 64); }
TEST(TraceCausality, Gemm) {
    expect_causal("run -p trn1 -t gemm -w gemm_32x3072x32 --set workload.tiles=4", 16);
}
TEST(TraceCausality, Stream) { expect_causal("run -p tiny -t stream", 16); }
TEST(TraceCausality, Gqa) {
    expect_causal("run -p trn1 -t gqa -w gqa_g1_llama31_8b_8k --trace-window '0 ns..20 us'", 16);
}
TEST(TraceCausality, Host) { expect_causal("run -p trn1 -t host -w host_matmul_512", 1); }
// The kernel testbench (a program from configs/kernels): its DMA reads through the same path.
TEST(TraceCausality, KernelProgram) {
    expect_causal("run -p trn1 -t kernel -w add --set kernel.ROWS=256 --set kernel.COLS=512", 16);
}
TEST(TraceCausality, TrafficThroughTheDma) {
    expect_causal("run -p tiny -t traffic --set testbench.path=dma --set 'testbench.duration=4 us' "
                  "--set 'testbench.warmup=1 us'", 16);
}

// The example: on gemm every flow had a step earlier than the step before it.
TEST(TraceCausality, GemmFlowsFromThePeInstructionToItsChannelGoForward) {
    TraceFile t = load(run_traced("run -p trn1 -t gemm -w gemm_32x3072x32 --set workload.tiles=48"));
    expect_flows_forward_in_time(t, "gemm 48 tiles");
}

TEST(TraceCausality, ALargeTraceWarnsWithTheEstimateAndTheWindowOption) {
    std::string file = temp_file("", ".json");
    auto r = run_shell("NCTLM_TRACE_WARN_BYTES=100000 " + std::string(NCTLM_BIN) + " run -p tiny -t b2b -q --trace " +
                       file);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("warning: the trace is already about"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("warning: the trace file will be about"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("--trace-window START..END"), std::string::npos) << r.err;
    auto quiet = run_cli("run -p tiny -t b2b -q --trace " + file);  // 200 MB by default: no warning here
    EXPECT_EQ(quiet.err, "");
}
