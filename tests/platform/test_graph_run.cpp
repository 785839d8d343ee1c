// Op graphs on whole platforms (testbenches/graph, docs/models.md): the per-op table adds up, a
// tensor keeps its HBM place from one kernel to the next, collectives report nccom-test's bus
// bandwidth, data-parallel replicas run side by side, and bad input exits 2 before anything runs.
#include "models/common/stats.h"
#include "tests/support.h"

#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <fmt/format.h>

using namespace nctlm;
using json = nlohmann::json;

namespace {

json mlp_graph(int tp, int dp) {
    std::ifstream in(test::source_path("configs/graphs/mlp_tp2.json"));
    json g = json::parse(in);
    g["placement"] = {{"tp", tp}, {"dp", dp}};
    g["phase"] = "prefill";
    g["tokens"] = 128;
    return g;
}

// One run of a graph file (a path, not a shipped name).
RunOutcome run_graph(const std::string& platform, const std::string& file) {
    RunOptions o;
    o.platform_file = test::platform(platform);
    o.testbench = "graph";
    o.workload_file = file;
    return run(o);
}

} // namespace

TEST(GraphRun, PerOpTableAddsUpToTheStep) {
    std::string file = test::temp_file(mlp_graph(2, 1).dump(), ".json");
    RunOutcome out = run_graph("tiny", file);
    ASSERT_TRUE(out.errors.empty()) << out.errors[0];
    const json& r = out.report["results"];
    const json& ops = r["ops"];
    ASSERT_EQ(ops.size(), 4u);
    double sum = 0, share = 0;
    for (auto& o : ops) {
        EXPECT_GT(o["time_ns"].get<double>(), 0) << o["name"];
        sum += o["time_ns"].get<double>();
        share += o["share"].get<double>();
    }
    // Each core runs the ops back to back: the critical core's op times cover the step.
    EXPECT_NEAR(sum, r["latency_ns"].get<double>(), 1e-6);
    EXPECT_NEAR(share, 1.0, 1e-9);
    EXPECT_NEAR(r["tokens_per_s"].get<double>(), 128 / (r["latency_ns"].get<double>() * 1e-9), 1e-6);
    // FLOPs of the two linears: 2 x 128 x 512 x 1024 each, over both ranks' halves.
    EXPECT_DOUBLE_EQ(ops[0]["flops"].get<double>(), 2.0 * 128 * 512 * 1024);
    EXPECT_EQ(ops[0]["kernels"], "linear");
    const json& c = r["collectives"][0];
    EXPECT_EQ(c["ranks"], 2);
    EXPECT_EQ(c["bytes"], 128 * 512 * 2);
    EXPECT_NEAR(c["algbw_gb_per_s"].get<double>(), 128 * 512 * 2 / c["time_ns"].get<double>(), 1e-9);
    EXPECT_NEAR(c["busbw_gb_per_s"].get<double>(), c["algbw_gb_per_s"].get<double>() * 2 * 1 / 2, 1e-9);
    for (auto& core : r["cores"])
        for (auto& [e, u] : core["utilization"].items())
            EXPECT_TRUE(u.get<double>() >= 0 && u.get<double>() <= 1.0 + 1e-9) << e;
    EXPECT_NE(out.summary.find("up                           linear"), std::string::npos) << out.summary;
}

TEST(GraphRun, ATensorKeepsItsHbmPlaceFromOneKernelToTheNext) {
    std::string file = test::temp_file(mlp_graph(2, 1).dump(), ".json");
    std::string trace = test::temp_file("", ".json");
    auto r = test::run_cli("run -p " + test::platform("tiny") + " -t graph -w " + file + " --trace " + trace + " -q");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::ifstream in(trace);
    json t = json::parse(in);
    std::map<int, std::string> process;
    for (auto& e : t["traceEvents"])
        if (e["ph"] == "M" && e["name"] == "process_name")
            process[e["pid"].get<int>()] = e["args"]["name"];
    // The linear's stores of h and the gelu's loads of h, on core 0: the same addresses.
    std::set<uint64_t> stored, loaded;
    std::vector<std::string> op_spans;
    for (auto& e : t["traceEvents"]) {
        if (e["ph"] != "X")
            continue;
        const std::string& p = process[e["pid"].get<int>()];
        if (p == "graph core 0")
            op_spans.push_back(e["name"]);
        if (p != "top.tile0.pe" || !e.contains("args") || !e["args"].contains("address"))
            continue;
        std::string source = e["args"].value("source", "");
        const json& av = e["args"]["address"];
        uint64_t a = av.is_string() ? std::stoull(av.get<std::string>(), nullptr, 0) : av.get<uint64_t>();
        if (source.find("linear.json: store y rows") != std::string::npos && stored.size() < 1000)
            stored.insert(a);
        if (source.find("gelu.json: x block") != std::string::npos)
            loaded.insert(a);
    }
    EXPECT_EQ(op_spans, (std::vector<std::string>{"up", "act", "down", "sum"})) << "one span per op on the core's track";
    ASSERT_FALSE(loaded.empty());
    for (uint64_t a : loaded)
        EXPECT_TRUE(stored.count(a)) << "gelu reads h at " << a << " where no linear stored it";
}

TEST(GraphRun, DataParallelReplicasRunSideBySide) {
    std::string file = test::temp_file(mlp_graph(2, 2).dump(), ".json");
    RunOutcome out = run_graph("trn2", file);
    ASSERT_TRUE(out.errors.empty()) << out.errors[0];
    const json& r = out.report["results"];
    ASSERT_EQ(r["cores"].size(), 4u);
    EXPECT_EQ(r["tokens"].get<double>(), 256);  // two replicas of 128 tokens
    double first = r["cores"][0]["end_ns"], third = r["cores"][2]["end_ns"];
    EXPECT_GT(third, 0);
    EXPECT_NEAR(first / third, 1.0, 0.2) << "replicas on other stacks take about as long";
}

TEST(GraphRun, BadInputExits2NamingTheNodeOrKeyAndRunsNothing) {
    json g = mlp_graph(2, 1);
    g["ops"][1]["op"] = "swish";
    auto r = test::run_cli("run -p " + test::platform("tiny") + " -t graph -w " + test::temp_file(g.dump(), ".json"));
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("/ops/1/op: unknown op 'swish'"), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "");
    g = mlp_graph(2, 1);
    g["tensors"][4]["shape"] = {1000, 512};
    r = test::run_cli("run -p " + test::platform("tiny") + " -t graph -w " + test::temp_file(g.dump(), ".json"));
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("(down): linear op: w 'w2' [500, 512] per rank: dimension 0 is 500, expected 512"),
              std::string::npos)
        << r.err;
    // TP not dividing the heads: Qwen2.5-7B's 28 heads over 8 ranks.
    r = test::run_cli("model --hf-config qwen2.5-7b --phase decode --batch 8 --context 512 --tp 8 --layers 1 --run -p trn2");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("qwen2.5-7b.json: num_attention_heads = 28 is not divisible by --tp 8"), std::string::npos)
        << r.err;
    EXPECT_EQ(r.out, "");
    // A model that does not fit HBM: Llama-3.1-8B whole on the tiny platform's 1 GiB stacks.
    r = test::run_cli("model --hf-config llama-3.1-8b --phase decode --batch 1 --context 128 --tp 2 --run -p tiny");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("does not fit HBM stack"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("the model does not fit"), std::string::npos) << r.err;
    // A missing or malformed config.
    r = test::run_cli("model --hf-config /nonexistent/config.json --phase decode --batch 1 --context 16");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("/nonexistent/config.json: cannot open the model config"), std::string::npos) << r.err;
    std::string broken = test::temp_file("{\"model_type\": \"llama\", \"hidden_size\": 4096,", ".json");
    r = test::run_cli("model --hf-config " + broken + " --phase decode --batch 1 --context 16");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find(broken + ": not valid JSON"), std::string::npos) << r.err;
    std::string partial = test::temp_file("{\"model_type\": \"llama\", \"hidden_size\": 4096}", ".json");
    r = test::run_cli("model --hf-config " + partial + " --phase decode --batch 1 --context 16");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find(partial + ": missing key 'num_attention_heads'"), std::string::npos) << r.err;
}

TEST(GraphRun, ModelCommandWritesAGraphTheRunReads) {
    std::string graph = test::temp_file("", ".json");
    auto r = test::run_cli("model --hf-config llama-3.1-8b --phase decode --batch 2 --context 256 --tp 2 --layers 1 -o " +
                           graph);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::string stats = test::temp_file("", ".json");
    r = test::run_cli("run -p " + test::platform("trn1") + " -t graph -w " + graph + " --stats-json " + stats + " -q");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::ifstream in(stats);
    json s = json::parse(in);
    EXPECT_EQ(s["results"]["ops"].size(), 17u);
    EXPECT_GT(s["results"]["per_token_latency_ns"].get<double>(), 0);
    EXPECT_EQ(s["results"]["phase"], "decode");
    r = test::run_cli("describe graph");
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_NE(r.out.find("| `attention_decode` |"), std::string::npos) << r.out;
    r = test::run_cli("describe graph --schema");
    EXPECT_EQ(json::parse(r.out)["properties"]["format"]["const"], "nctlm-graph");
}

// Every shipped model config (nctlm model --list) builds and runs one layer on trn1 and on trn2:
// decoders one decode step, encoders one forward pass, tp 2 (it divides every shipped config's heads).
TEST(GraphRun, EveryShippedModelConfigRunsOnTrn1AndTrn2) {
    auto listed = test::run_cli("model --list");
    ASSERT_EQ(listed.exit_code, 0) << listed.err;
    std::vector<std::string> names;
    std::stringstream lines(listed.out);
    for (std::string line; std::getline(lines, line);)
        if (!line.empty())
            names.push_back(line.substr(0, line.find(' ')));
    ASSERT_GE(names.size(), 4u) << listed.out;
    for (const std::string& name : names) {
        const bool encoder = name.find("bert") != std::string::npos;
        for (const std::string platform : {"trn1", "trn2"}) {
            const std::string stats = test::temp_file("", ".json");
            auto r = test::run_cli(fmt::format("model --hf-config {} --phase {} --batch 1 --tp 2 --layers 1 --run -p {} -q "
                                               "--stats-json {}",
                                               name, encoder ? "prefill --seq 128" : "decode --context 128", platform, stats));
            ASSERT_EQ(r.exit_code, 0) << name << " on " << platform << "\n" << r.err;
            std::ifstream in(stats);
            const json res = json::parse(in)["results"];
            EXPECT_GT(res["latency_ns"].get<double>(), 0) << name << " on " << platform;
            EXPECT_GE(res["ops"].size(), 10u) << name << " on " << platform;
            EXPECT_EQ(res["phase"], encoder ? "encoder" : "decode") << name << " on " << platform;
        }
    }
}

// The public figure docs/models.md puts next to the model's: bert-base-uncased, batch 16, sequence
// 128, on one trn1 NeuronCore, 9.34 ms P50 (AWS Neuron "Trn1 Inference Performance",
// about-neuron/benchmarks/trn1/throughput_data_encoder.csv: Neuron 2.27, FP32 model with matmuls
// auto-cast to BF16, trn1.2xlarge data parallel over its 2 cores). The model is slower by a known,
// documented gap (2.20x: separately launched, unfused kernels); this holds the gap where the docs
// say it is, so a change that moves it is seen and the docs updated.
TEST(GraphRun, BertBaseNextToItsPublicFigure) {
    std::string graph = test::temp_file("", ".json");
    auto r = test::run_cli("model --hf-config bert-base-uncased --phase prefill --batch 16 --seq 128 -o " + graph);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    RunOutcome out = run_graph("trn1", graph);
    ASSERT_TRUE(out.errors.empty()) << out.errors[0];
    const double public_ms = 9.34, model_ms = out.report["results"]["latency_ns"].get<double>() / 1e6;
    RecordProperty("ratio_to_public", std::to_string(model_ms / public_ms));
    EXPECT_GT(model_ms / public_ms, 1.8) << model_ms << " ms: faster than docs/models.md says; update its table";
    EXPECT_LT(model_ms / public_ms, 2.6) << model_ms << " ms: slower than docs/models.md says; update its table";
}

// The decode layer docs/models.md puts next to the bound every implementation shares (no public
// per-token figure at these conditions was found): Llama-3.1-8B, batch 8, context 2048, tp 8 over
// trn2's 8 cores. A token reads the layer's weights and KV caches once; at the chip's 2.9 TB/s of
// HBM (Trainium2 architecture guide) that is the floor. The model is above it by the documented
// gap (2.3x: DMA issue per core, start latencies, the row kernels); this holds the gap there.
TEST(GraphRun, LlamaDecodeLayerNextToTheBytesBound) {
    std::string graph = test::temp_file("", ".json");
    auto r = test::run_cli("model --hf-config llama-3.1-8b --phase decode --batch 8 --context 2048 --tp 8 --layers 1 -o " +
                           graph);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::ifstream in(graph);
    json g = json::parse(in);
    double bytes = 0;
    for (const json& t : g["tensors"]) {
        std::string kind = t.value("kind", "");
        if (kind != "weight" && kind != "kv_cache")
            continue;
        if (t["name"].get<std::string>().rfind("rope.", 0) == 0)
            continue;  // the position tables: a token reads one row
        double n = 2;  // bf16
        for (const json& d : t["shape"])
            n *= d.get<double>();
        bytes += n;
    }
    // Weights: 4096 x (4096 + 2 x 1024 + 4096) + 3 x 4096 x 14336, two norms' 4096; KV: 8 x 2048 x 8 x 128 x 2.
    EXPECT_DOUBLE_EQ(bytes, 2.0 * (4096.0 * 10240 + 3.0 * 4096 * 14336 + 2 * 4096) + 2.0 * 8 * 2048 * 8 * 128 * 2);
    RunOutcome out = run_graph("trn2", graph);
    ASSERT_TRUE(out.errors.empty()) << out.errors[0];
    const double bound_ns = bytes / 2.9e12 * 1e9, model_ns = out.report["results"]["per_token_latency_ns"].get<double>();
    RecordProperty("ratio_to_bound", std::to_string(model_ns / bound_ns));
    EXPECT_GT(model_ns / bound_ns, 1.8) << model_ns << " ns: closer to the bound than docs/models.md says; update it";
    EXPECT_LT(model_ns / bound_ns, 2.6) << model_ns << " ns: further from the bound than docs/models.md says; update it";
}

// A graph step is one launch: pe.launch_overhead is paid once, before the first op, not per op
// (refresh off: otherwise the later start moves where HBM refreshes fall). One run per process.
TEST(GraphRun, TheStepPaysOneLaunchOverhead) {
    std::string file = test::temp_file(mlp_graph(2, 1).dump(), ".json");
    auto run_with = [&](const char* overhead) {
        std::string stats = test::temp_file("", ".json");
        auto r = test::run_cli("run -p " + test::platform("trn1") + " -t graph -w " + file +
                               " --set hbm.refresh=off --set pe.launch_overhead=" + overhead + " -q -o " + stats);
        EXPECT_EQ(r.exit_code, 0) << r.err;
        std::ifstream in(stats);
        json report = json::parse(in, nullptr, false);
        std::remove(stats.c_str());
        return report.is_discarded() ? json::object() : report["results"];
    };
    json none = run_with("0ns"), some = run_with("7us");
    ASSERT_GT(none["ops"].size(), 1u);
    EXPECT_NEAR(some["latency_ns"].get<double>(), none["latency_ns"].get<double>() + 7000, 1e-6);
    EXPECT_NEAR(some["ops"][0]["time_ns"].get<double>(), none["ops"][0]["time_ns"].get<double>() + 7000, 1e-6);
    for (size_t i = 1; i < none["ops"].size(); ++i)
        EXPECT_NEAR(some["ops"][i]["time_ns"].get<double>(), none["ops"][i]["time_ns"].get<double>(), 1e-6) << i;
}
