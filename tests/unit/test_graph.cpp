// Op graphs without a kernel (models/graph, docs/models.md): loading and its errors, per-rank
// shapes, the schema, the Hugging Face frontend, the lowering's tiling and bindings, HBM placement.
#include "models/common/config.h"
#include "models/graph/graph_lowering.h"
#include "models/graph/graph_schema.h"
#include "models/graph/hbm_plan.h"
#include "models/graph/hf_model.h"
#include "tests/support.h"
#include "tests/xorshift.h"

#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using namespace nctlm;
using namespace nctlm::graph;
using json = nlohmann::json;

namespace {

// A two-layer tensor-parallel MLP: x -> linear (split columns) -> gelu -> linear (split rows) -> all_reduce.
json mlp(int tp = 2, int64_t t = 128, int64_t h = 512, int64_t f = 1024) {
    return {{"format", "nctlm-graph"},
            {"version", 1},
            {"placement", {{"tp", tp}}},
            {"tensors",
             {{{"name", "x"}, {"shape", {t, h}}, {"kind", "input"}},
              {{"name", "w1"}, {"shape", {h, f}}, {"kind", "weight"}, {"split", 1}},
              {{"name", "h"}, {"shape", {t, f}}, {"split", 1}},
              {{"name", "g"}, {"shape", {t, f}}, {"split", 1}},
              {{"name", "w2"}, {"shape", {f, h}}, {"kind", "weight"}, {"split", 0}},
              {{"name", "p"}, {"shape", {t, h}}},
              {{"name", "y"}, {"shape", {t, h}}, {"kind", "output"}}}},
            {"ops",
             {{{"name", "up"}, {"op", "linear"}, {"x", "x"}, {"w", "w1"}, {"y", "h"}},
              {{"name", "act"}, {"op", "gelu"}, {"x", "h"}, {"y", "g"}},
              {{"name", "down"}, {"op", "linear"}, {"x", "g"}, {"w", "w2"}, {"y", "p"}},
              {{"name", "sum"}, {"op", "all_reduce"}, {"x", "p"}, {"y", "y"}}}}};
}

std::string error_of(const json& j) {
    try {
        Graph::from_json(j, "g.json");
    } catch (const GraphError& e) {
        return e.what();
    }
    return "";
}

PlatformConfig platform_config(const std::string& name) {
    ConfigTree tree = ConfigTree::from_file(test::platform(name));
    return PlatformConfig::load(tree);
}

json llama(int64_t layers = 32) {
    return {{"model_type", "llama"},  {"hidden_size", 4096},        {"intermediate_size", 14336},
            {"num_attention_heads", 32}, {"num_key_value_heads", 8}, {"num_hidden_layers", layers},
            {"vocab_size", 128256},      {"max_position_embeddings", 131072}};
}

} // namespace

TEST(Graph, LoadsPerRankShapesAndSchedule) {
    Graph g = Graph::from_json(mlp(), "g.json");
    ASSERT_EQ(g.ops.size(), 4u);
    EXPECT_EQ(g.placement.tp, 2u);
    EXPECT_EQ(g.placement.cores, (std::vector<uint32_t>{0, 1}));
    EXPECT_EQ(g.tensors[size_t(g.find_tensor("w1"))].rank_shape, (std::vector<int64_t>{512, 512}));
    EXPECT_EQ(g.tensors[size_t(g.find_tensor("w2"))].rank_shape, (std::vector<int64_t>{512, 512}));
    EXPECT_EQ(g.tensors[size_t(g.find_tensor("x"))].rank_bytes, 128u * 512 * 2);
    EXPECT_EQ(g.order, (std::vector<int>{0, 1, 2, 3}));
    EXPECT_EQ(g.ops[3].attrs["algorithm"], "auto");  // defaults filled in
    // Ops listed out of order are scheduled after their producers (the file's order otherwise).
    json j = mlp();
    std::swap(j["ops"][0], j["ops"][2]);
    Graph h = Graph::from_json(j, "g.json");
    EXPECT_EQ(h.ops[size_t(h.order[0])].name, "up");
    EXPECT_EQ(h.ops[size_t(h.order[2])].name, "down");
}

TEST(Graph, BadInputNamesTheOpTensorOrKey) {
    struct Case {
        std::function<void(json&)> edit;
        std::string expect;
    };
    std::vector<Case> cases = {
        {[](json& j) { j["ops"][1]["op"] = "gelo"; }, "/ops/1/op: unknown op 'gelo'; did you mean 'gelu'?"},
        {[](json& j) { j["ops"][1]["op"] = "conv2d"; }, "unknown op 'conv2d'"},
        {[](json& j) { j["ops"][0]["bias"] = "x"; }, "/ops/0: unknown key 'bias'"},
        {[](json& j) { j["ops"][0].erase("w"); }, "linear op 'up': missing input 'w'"},
        {[](json& j) { j["ops"][0]["w"] = "w3"; }, "/ops/0/w: unknown tensor 'w3'; did you mean 'w1'?"},
        {[](json& j) { j["tensors"][1]["shape"] = {500, 1024}; },
         "/ops/0 (up): linear op: w 'w1' [500, 512] per rank: dimension 0 is 500, expected 512"},
        {[](json& j) { j["tensors"][1]["shape"] = {512, 1023}; }, "tensor 'w1': dimension 1 (1023) is not divisible"},
        {[](json& j) { j["ops"][2]["y"] = "h"; }, "tensor 'h' is written by op 'up' and op 'down'"},
        {[](json& j) { j["ops"].erase(1); }, "tensor 'g' (activation) is never written"},
        {[](json& j) { j["ops"][0]["y"] = "w2"; }, "writes 'w2', a tensor of kind weight"},
        {[](json& j) { j["version"] = 2; }, "/version: version 2 is not read by this build (it reads version 1)"},
        {[](json& j) { j["placement"]["cores"] = {0, 1, 2}; }, "3 cores listed but tp x dp = 2 x 1 = 2 ranks"},
        {[](json& j) { j["ops"][3]["op"] = "all_gather"; }, "/ops/3 (sum): all_gather op: x 'p' [128, 512] per rank is not split"},
        {[](json& j) { j["ops"][3]["algorithm"] = "butterfly"; }, "algorithm is \"ring\", \"tree\" or \"auto\""},
        {[](json& j) { j["tensors"][0]["dtype"] = "int8"; }, "/tensors/0/dtype: 'int8' is not a dtype"},
        {[](json& j) { j["ops"][1]["after"] = {"act"}; }, "op 'act' is part of a dependency cycle"},
    };
    for (auto& c : cases) {
        json j = mlp();
        c.edit(j);
        std::string err = error_of(j);
        EXPECT_NE(err.find(c.expect), std::string::npos) << "expected: " << c.expect << "\ngot: " << err;
        EXPECT_EQ(err.rfind("g.json: ", 0), 0u) << err;
    }
}

TEST(Graph, AttentionHeadsNotDividingTheRanksNameTheAttribute) {
    HfConfig c = hf_config_from_json(llama(1), "llama.json");
    ModelStep s;
    s.phase = "decode";
    s.batch = 4;
    s.context = 256;
    s.tp = 2;
    s.layers = 1;
    json j = build_model_graph(c, s);
    j["placement"]["tp"] = 3;  // tensors split over 3 no longer divide: the loader says which
    std::string err = error_of(j);
    EXPECT_NE(err.find("is not divisible by the tensor-parallel degree 3"), std::string::npos) << err;
    // The attention op's own check: heads per rank.
    j = build_model_graph(c, s);
    for (auto& o : j["ops"])
        if (o["op"] == "attention_decode")
            o["heads"] = 31;
    err = error_of(j);
    EXPECT_NE(err.find("/ops/6 (l0.attn): attention_decode op: heads = 31 is not divisible by the tensor-parallel degree 2"),
              std::string::npos)
        << err;
}

TEST(Graph, RandomValidChainsLoadWithPerRankShapesDividedByTp) {
    test::XorShift64 rng{0x9e3779b97f4a7c15ull};
    for (int trial = 0; trial < 50; ++trial) {
        int tp = 1 << (rng() % 4);
        int64_t t = int64_t(1 + rng() % 300), h = int64_t(128 * tp * (1 + rng() % 4)), f = int64_t(128 * tp * (1 + rng() % 6));
        Graph g = Graph::from_json(mlp(tp, t, h, f), "g.json");
        EXPECT_EQ(g.tensors[size_t(g.find_tensor("h"))].rank_shape, (std::vector<int64_t>{t, f / tp}));
        EXPECT_EQ(g.tensors[size_t(g.find_tensor("w2"))].rank_bytes, uint64_t(f / tp * h * 2));
        EXPECT_EQ(g.tensors[size_t(g.find_tensor("y"))].rank_shape, (std::vector<int64_t>{t, h}));
    }
}

TEST(Graph, SchemaAndMarkdownComeFromTheOpTable) {
    json s = graph_schema();
    const json& ops = s["properties"]["ops"]["items"]["oneOf"];
    ASSERT_EQ(ops.size(), op_specs().size());
    for (size_t i = 0; i < ops.size(); ++i) {
        EXPECT_EQ(ops[i]["properties"]["op"]["const"], op_specs()[i].name);
        for (auto& r : op_specs()[i].inputs)
            EXPECT_TRUE(ops[i]["properties"].contains(r.name)) << op_specs()[i].name << " " << r.name;
    }
    std::string md = graph_format_markdown();
    for (auto& spec : op_specs())
        EXPECT_NE(md.find(std::string("| `") + spec.name + "`"), std::string::npos) << spec.name;
    // docs/models.md shows the table as `nctlm describe graph` prints it.
    std::ifstream in(test::source_path("docs/models.md"));
    std::string doc((std::istreambuf_iterator<char>(in)), {});
    EXPECT_NE(doc.find(md), std::string::npos) << "docs/models.md's op table drifted from the op table: paste\n" << md;
}

TEST(Graph, HfDecoderLayerHasTheLlamaOpsAndBadConfigsNameTheKey) {
    HfConfig c = hf_config_from_json(llama(), "llama.json");
    EXPECT_EQ(c.head_dim, 128);
    ModelStep s;
    s.phase = "decode";
    s.batch = 8;
    s.context = 2048;
    s.tp = 8;
    s.layers = 1;
    Graph g = Graph::from_json(build_model_graph(c, s), "llama");
    std::vector<std::string> kinds;
    for (int i : g.order)
        kinds.push_back(g.ops[size_t(i)].spec().name);
    EXPECT_EQ(kinds, (std::vector<std::string>{"rmsnorm", "linear", "linear", "linear", "rope", "rope", "attention_decode",
                                               "linear", "all_reduce", "add", "rmsnorm", "linear", "linear", "silu_mul",
                                               "linear", "all_reduce", "add"}));
    EXPECT_EQ(g.tokens, 8);
    EXPECT_EQ(g.phase, "decode");
    const GraphTensor& kc = g.tensors[size_t(g.find_tensor("l0.k_cache"))];
    EXPECT_EQ(kc.rank_shape, (std::vector<int64_t>{8, 1, 128, 2048}));
    // The whole model: embedding, 32 layers, final norm, LM head (vocabulary padded), all-gather.
    s.layers = -1;
    Graph whole = Graph::from_json(build_model_graph(c, s), "llama");
    EXPECT_EQ(whole.ops.size(), 1 + 32 * 17 + 3u);
    EXPECT_EQ(whole.tensors[size_t(whole.find_tensor("logits"))].shape[1], 129024);  // 128256 -> 1008 x 128
    auto expect_error = [&](json cfg, ModelStep st, const std::string& want) {
        try {
            build_model_graph(hf_config_from_json(cfg, "cfg.json"), st);
            ADD_FAILURE() << "no error, expected: " << want;
        } catch (const GraphError& e) {
            EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
        }
    };
    json qwen = llama();
    qwen["num_attention_heads"] = 28;
    qwen["num_key_value_heads"] = 4;
    qwen["hidden_size"] = 3584;
    expect_error(qwen, s, "cfg.json: num_attention_heads = 28 is not divisible by --tp 8");
    json no_hidden = llama();
    no_hidden.erase("hidden_size");
    expect_error(no_hidden, s, "cfg.json: missing key 'hidden_size'");
    json bad = llama();
    bad["num_key_value_heads"] = "eight";
    expect_error(bad, s, "cfg.json: 'num_key_value_heads' is \"eight\"");
    json bert = {{"model_type", "bert"},         {"hidden_size", 768}, {"intermediate_size", 3072},
                 {"num_attention_heads", 12},    {"num_hidden_layers", 12}, {"vocab_size", 30522},
                 {"max_position_embeddings", 512}};
    ModelStep one = s;
    one.tp = 1;
    expect_error(bert, one, "bert is an encoder: it has no decode step");
    expect_error({{"model_type", "t5"}}, one, "model_type 't5' is not built here");
}

TEST(Graph, LoweringBindsEveryKernelTensorAndFitsTheCore) {
    PlatformConfig pc = platform_config("trn2");
    HfConfig c = hf_config_from_json(llama(), "llama.json");
    for (const char* phase : {"decode", "prefill"}) {
        ModelStep s;
        s.phase = phase;
        s.batch = 8;
        s.context = 2048;
        s.seq = 512;
        s.tp = 8;
        s.layers = 1;
        Graph g = Graph::from_json(build_model_graph(c, s), "llama");
        KernelLibrary lib;
        Lowering l = lower_graph(g, pc, lib);
        ASSERT_EQ(l.ops.size(), g.ops.size());
        for (auto& lo : l.ops)
            for (auto& call : lo.calls) {
                ASSERT_EQ(call.binds.size(), call.program->tensors.size()) << call.kernel;
                kernel::Layout layout = kernel::make_layout(*call.program, pc.pe, 8);  // fits SBUF and PSUM
                for (size_t t = 0; t < call.binds.size(); ++t) {
                    const KernelBind& b = call.binds[t];
                    uint64_t bytes = layout.tensors[t].bytes;
                    if (b.tensor >= 0)
                        EXPECT_EQ(bytes, g.tensors[size_t(b.tensor)].rank_bytes) << call.kernel << " " << t;
                    else
                        EXPECT_EQ(bytes, call.scratch.at(size_t(b.scratch)));
                }
            }
    }
}

TEST(Graph, LinearTilingRuleOnRandomShapes) {
    // Documented rule: TB = min(T, 512) first, NB the largest of 512/384/256/128 dividing N, KB the
    // largest multiple of 128 dividing K with KB x NB x 2 B <= 512 KiB, WBUFS 4 if it fits.
    PlatformConfig pc = platform_config("trn1");
    test::XorShift64 rng{12345};
    for (int trial = 0; trial < 30; ++trial) {
        int64_t t = int64_t(1 + rng() % 1000), k = int64_t(128 * (1 + rng() % 24)), n = int64_t(128 * (1 + rng() % 24));
        json j = mlp(1, t, k, n);
        j["ops"] = {j["ops"][0]};
        j["tensors"] = {j["tensors"][0], j["tensors"][1], j["tensors"][2]};
        j["tensors"][1].erase("split");
        j["tensors"][2].erase("split");
        j["tensors"][2]["kind"] = "output";
        Graph g = Graph::from_json(j, "g.json");
        KernelLibrary lib;
        Lowering l = lower_graph(g, pc, lib);
        const kernel::KernelProgram& p = *l.ops[0].calls[0].program;
        auto arg = [&](const std::string& name) {
            for (size_t i = 0; i < p.arg_names.size(); ++i)
                if (p.arg_names[i] == name)
                    return p.arg_values[i];
            return int64_t(-1);
        };
        int64_t nb = arg("NB"), kb = arg("KB");
        int64_t want_nb = n % 512 == 0 ? 512 : n % 384 == 0 ? 384 : n % 256 == 0 ? 256 : 128;
        EXPECT_EQ(arg("T"), t);
        EXPECT_LE(arg("TB"), std::min<int64_t>(t, 512));
        if (arg("TB") == std::min<int64_t>(t, 512)) {
            EXPECT_EQ(nb, want_nb) << "N=" << n;
            EXPECT_EQ(k % kb, 0);
            EXPECT_LE(kb * nb * 2, 512 * 1024);
            EXPECT_TRUE(kb + 128 > k || k % (kb + 128) != 0 || (kb + 128) * nb * 2 > 512 * 1024) << "KB is the largest";
        }
    }
}

TEST(Graph, HbmPlanReusesActivationSpaceAndNeverOverlapsLiveTensors) {
    PlatformConfig pc = platform_config("trn2");
    HfConfig c = hf_config_from_json(llama(), "llama.json");
    ModelStep s;
    s.phase = "prefill";
    s.batch = 2;
    s.seq = 512;
    s.tp = 8;
    s.layers = 3;
    Graph g = Graph::from_json(build_model_graph(c, s), "llama");
    KernelLibrary lib;
    Lowering l = lower_graph(g, pc, lib);
    HbmTarget t;
    for (uint32_t core : g.placement.cores)
        t.rank_stack.push_back(core * pc.hbm.stacks / pc.platform.tiles);
    t.stacks = pc.hbm.stacks;
    t.capacity = pc.hbm.stack_capacity;
    t.align = 65536;
    HbmPlan plan = plan_hbm(g, l, t);
    uint64_t activations = 0;
    for (auto& gt : g.tensors)
        if (!gt.persistent())
            activations += gt.rank_bytes;
    // Two ranks share each stack: the stack's peak is below what keeping every activation would take.
    EXPECT_LT(plan.peak[0] - plan.persistent[0], 2 * activations / 2);
    // Live intervals of the tensors of rank 0 never overlap in space.
    std::vector<size_t> first(g.tensors.size(), 0), last(g.tensors.size(), l.ops.size());
    for (size_t p = 0; p < l.ops.size(); ++p) {
        const GraphOp& op = g.ops[size_t(l.ops[p].op)];
        for (int o : op.outputs)
            if (o >= 0 && !g.tensors[size_t(o)].persistent())
                first[size_t(o)] = p;
    }
    for (size_t i = 0; i < g.tensors.size(); ++i) {
        if (g.tensors[i].persistent() || g.tensors[i].kind == TensorKind::Output)
            continue;
        size_t e = first[i];
        for (int c2 : g.tensors[i].consumers)
            for (size_t p = 0; p < l.ops.size(); ++p)
                if (l.ops[p].op == c2)
                    e = std::max(e, p);
        last[i] = e;
    }
    for (size_t a = 0; a < g.tensors.size(); ++a)
        for (size_t b = a + 1; b < g.tensors.size(); ++b) {
            bool time = first[a] <= last[b] && first[b] <= last[a];
            uint64_t pa = plan.tensor[a][0], pb = plan.tensor[b][0];
            bool space = pa < pb + g.tensors[b].rank_bytes && pb < pa + g.tensors[a].rank_bytes;
            EXPECT_FALSE(time && space) << g.tensors[a].name << " and " << g.tensors[b].name;
        }
    // A model too large for the stacks is refused naming the tensor and the stack.
    t.capacity = 64ull << 20;
    try {
        plan_hbm(g, l, t);
        ADD_FAILURE() << "expected a does-not-fit error";
    } catch (const GraphError& e) {
        EXPECT_NE(std::string(e.what()).find("does not fit HBM stack 0 (cores 0, 1)"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("tensor 'l"), std::string::npos) << e.what();
    }
}

TEST(Graph, LoweringRefusesWhatTheKernelsCannotTake) {
    PlatformConfig pc = platform_config("trn1");
    KernelLibrary lib;
    json j = mlp(2);
    j["placement"]["cores"] = {0, 5};
    try {
        lower_graph(Graph::from_json(j, "g.json"), pc, lib);
        ADD_FAILURE();
    } catch (const GraphError& e) {
        EXPECT_NE(std::string(e.what()).find("/placement/cores/1: core 5 but platform trn1 has 2 NeuronCores"),
                  std::string::npos)
            << e.what();
    }
    j = mlp(2);
    j["placement"]["chips"] = {0, 1};
    try {
        lower_graph(Graph::from_json(j, "g.json"), pc, lib);
        ADD_FAILURE();
    } catch (const GraphError& e) {
        EXPECT_NE(std::string(e.what()).find("/placement/chips/1: chip 1 but platform trn1 has 1 chip (a multi-chip "
                                             "platform: trn1-16, trn2-16)"),
                  std::string::npos)
            << e.what();
    }
    j = mlp(1, 128, 500, 1024);  // K = 500: not whole 128-row tiles
    try {
        lower_graph(Graph::from_json(j, "g.json"), pc, lib);
        ADD_FAILURE();
    } catch (const GraphError& e) {
        EXPECT_NE(std::string(e.what()).find("/ops/0 (up): linear op: linear of K = 500"), std::string::npos) << e.what();
    }
}
