#include "models/graph/hf_model.h"

#include "models/common/json_file.h"

#include <fmt/format.h>
#include <fstream>

namespace nctlm::graph {

using json = nlohmann::json;

namespace {

int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

int64_t key_int(const json& j, const std::string& file, const char* key, int64_t fallback = -1) {
    if (!j.contains(key) || j[key].is_null()) {
        if (fallback >= 0)
            return fallback;
        throw GraphError(fmt::format("{}: missing key '{}' (a Hugging Face config.json of the model)", file, key));
    }
    if (!j[key].is_number_integer() || j[key].get<int64_t>() < 1)
        throw GraphError(fmt::format("{}: '{}' is {}: expected an integer >= 1", file, key, j[key].dump()));
    return j[key].get<int64_t>();
}

// A graph under construction: tensors and ops as the format's JSON.
class Builder {
public:
    Builder(const HfConfig& c, const ModelStep& s) : c_(c), s_(s) {}

    std::string tensor(const std::string& name, std::vector<int64_t> shape, const char* kind = "activation", int split = -1,
                       const std::string& dtype = "") {
        json t = {{"name", name}, {"shape", shape}, {"dtype", dtype.empty() ? c_.dtype : dtype}};
        if (std::string(kind) != "activation")
            t["kind"] = kind;
        if (split >= 0)
            t["split"] = split;
        tensors_.push_back(t);
        return name;
    }
    void op(json o) {
        if (layer_ >= 0)
            o["layer"] = layer_;
        ops_.push_back(std::move(o));
    }
    void layer(int i) { layer_ = i; }

    // y = x w (+ b), w [k, n] split along `split` (1: columns, 0: rows), y's split follows.
    std::string linear(const std::string& name, const std::string& x, int64_t t, int64_t k, int64_t n, int split, bool bias) {
        std::string w = tensor(name + ".w", {k, n}, "weight", split);
        std::string y = tensor(name + ".y", {t, n}, "activation", split == 1 ? 1 : -1);
        json o = {{"op", "linear"}, {"name", name}, {"x", x}, {"w", w}, {"y", y}};
        if (bias)
            o["b"] = tensor(name + ".b", {n}, "weight", split == 1 ? 0 : -1);
        op(o);
        return y;
    }
    // Sums the ranks' partial results of a row-parallel linear (nothing to do on one rank).
    std::string all_reduce(const std::string& name, const std::string& x, int64_t t, int64_t n) {
        if (s_.tp == 1)
            return x;
        std::string y = tensor(name + ".y", {t, n});
        op({{"op", "all_reduce"}, {"name", name}, {"x", x}, {"y", y}});
        return y;
    }
    std::string unary(const char* kind, const std::string& name, const std::string& x, std::vector<int64_t> shape, int split) {
        std::string y = tensor(name + ".y", shape, "activation", split);
        op({{"op", kind}, {"name", name}, {"x", x}, {"y", y}});
        return y;
    }
    std::string binary(const char* kind, const std::string& name, const std::string& a, const std::string& b, const char* ra,
                       const char* rb, std::vector<int64_t> shape, int split) {
        std::string y = tensor(name + ".y", shape, "activation", split);
        op({{"op", kind}, {"name", name}, {ra, a}, {rb, b}, {"y", y}});
        return y;
    }
    std::string norm(const char* kind, const std::string& name, const std::string& x, int64_t t, int64_t h) {
        std::string y = tensor(name + ".y", {t, h});
        json o = {{"op", kind}, {"name", name}, {"x", x}, {"w", tensor(name + ".w", {h}, "weight")}, {"y", y}, {"eps", c_.eps}};
        if (std::string(kind) == "layernorm")
            o["b"] = tensor(name + ".b", {h}, "weight");
        op(o);
        return y;
    }
    std::string embedding(const std::string& name, const std::string& ids, int64_t rows, int64_t t, int64_t h) {
        std::string table = tensor(name + ".table", {rows, h}, "weight");
        std::string y = tensor(name + ".y", {t, h});
        op({{"op", "embedding"}, {"name", name}, {"ids", ids}, {"table", table}, {"y", y}});
        return y;
    }
    void rename_output(const std::string& name) {
        for (auto& t : tensors_)
            if (t["name"] == name)
                t["kind"] = "output";
    }

    json finish(const std::string& name, const std::string& phase, int64_t tokens) const {
        json placement = {{"tp", s_.tp}};
        if (s_.dp > 1)
            placement["dp"] = s_.dp;
        return {{"format", "nctlm-graph"}, {"version", kGraphFormatVersion}, {"name", name},     {"source", c_.file},
                {"phase", phase},          {"tokens", tokens},                {"layers", c_.layers}, {"placement", placement},
                {"tensors", tensors_},     {"ops", ops_}};
    }

private:
    const HfConfig& c_;
    const ModelStep& s_;
    json tensors_ = json::array(), ops_ = json::array();
    int layer_ = -1;
};

json decoder(const HfConfig& c, const ModelStep& s) {
    Builder b(c, s);
    const bool decode = s.phase == "decode";
    const int64_t B = s.batch, S = decode ? 1 : s.seq, T = B * S, H = c.hidden, D = c.head_dim, hq = c.heads,
                  hkv = c.kv_heads, I = c.intermediate;
    const int64_t attended = decode ? s.context : S;
    const int64_t cap = round_up(attended, 128);  // the kernels lay the caches out in rows of 128 positions
    std::string cos = b.tensor("rope.cos", {cap, D / 2}, "weight"), sin = b.tensor("rope.sin", {cap, D / 2}, "weight");
    const bool whole = s.layers < 0;
    std::string h;
    if (whole) {
        std::string ids = b.tensor("ids", {T}, "input", -1, "int32");
        h = b.embedding("embed", ids, c.vocab, T, H);
    } else {
        h = b.tensor("hidden_in", {T, H}, "input");
    }
    const int64_t L = whole ? c.layers : s.layers;
    for (int64_t i = 0; i < L; ++i) {
        b.layer(int(i));
        std::string p = fmt::format("l{}.", i);
        std::string x = b.norm("rmsnorm", p + "attn_norm", h, T, H);
        std::string q = b.linear(p + "q_proj", x, T, H, hq * D, 1, c.qkv_bias);
        std::string k = b.linear(p + "k_proj", x, T, H, hkv * D, 1, c.qkv_bias);
        std::string v = b.linear(p + "v_proj", x, T, H, hkv * D, 1, c.qkv_bias);
        std::string qr = b.tensor(p + "rope_q.y", {T, hq * D}, "activation", 1);
        std::string kr = b.tensor(p + "rope_k.y", {T, hkv * D}, "activation", 1);
        int64_t pos = decode ? s.context - 1 : 0;
        b.op({{"op", "rope"}, {"name", p + "rope_q"}, {"x", q}, {"cos", cos}, {"sin", sin}, {"y", qr}, {"heads", hq},
              {"seq", S}, {"position", pos}});
        b.op({{"op", "rope"}, {"name", p + "rope_k"}, {"x", k}, {"cos", cos}, {"sin", sin}, {"y", kr}, {"heads", hkv},
              {"seq", S}, {"position", pos}});
        std::string kc = b.tensor(p + "k_cache", {B, hkv, D, cap}, "kv_cache", 1);
        std::string vc = b.tensor(p + "v_cache", {B, hkv, cap, D}, "kv_cache", 1);
        std::string a = b.tensor(p + "attn.o", {T, hq * D}, "activation", 1);
        if (decode)
            b.op({{"op", "attention_decode"}, {"name", p + "attn"}, {"q", qr}, {"k", kr}, {"v", v}, {"k_cache", kc},
                  {"v_cache", vc}, {"o", a}, {"heads", hq}, {"kv_heads", hkv}, {"context", s.context}});
        else
            b.op({{"op", "attention"}, {"name", p + "attn"}, {"q", qr}, {"k", kr}, {"v", v}, {"o", a}, {"k_cache", kc},
                  {"v_cache", vc}, {"heads", hq}, {"kv_heads", hkv}, {"batch", B}, {"causal", true}});
        std::string o = b.all_reduce(p + "attn_all_reduce", b.linear(p + "o_proj", a, T, hq * D, H, 0, false), T, H);
        std::string h1 = b.binary("add", p + "attn_residual", h, o, "a", "b", {T, H}, -1);
        std::string x2 = b.norm("rmsnorm", p + "mlp_norm", h1, T, H);
        std::string g = b.linear(p + "gate_proj", x2, T, H, I, 1, false);
        std::string u = b.linear(p + "up_proj", x2, T, H, I, 1, false);
        std::string act = b.binary("silu_mul", p + "act", g, u, "gate", "up", {T, I}, 1);
        std::string d = b.all_reduce(p + "mlp_all_reduce", b.linear(p + "down_proj", act, T, I, H, 0, false), T, H);
        h = b.binary("add", p + "mlp_residual", h1, d, "a", "b", {T, H}, -1);
    }
    b.layer(-1);
    if (whole) {
        h = b.norm("rmsnorm", "final_norm", h, T, H);
        if (decode) {
            // The LM head's vocabulary padded to whole 128-column tiles on every rank (as Neuron pads it).
            int64_t vpad = round_up(c.vocab, 128 * s.tp);
            std::string shard = b.linear("lm_head", h, T, H, vpad, 1, false);
            std::string logits = b.tensor("logits", {T, vpad}, "output");
            if (s.tp > 1)
                b.op({{"op", "all_gather"}, {"name", "logits_all_gather"}, {"x", shard}, {"y", logits}});
            else
                b.rename_output(shard);
        } else {
            b.rename_output(h);
        }
    } else {
        b.rename_output(h);
    }
    std::string what = decode ? fmt::format("decode batch {} context {}", B, s.context)
                              : fmt::format("prefill batch {} seq {}", B, S);
    std::string layers = whole ? "whole model" : fmt::format("{} layer{}", L, L == 1 ? "" : "s");
    return b.finish(fmt::format("{} {}, {}, tp {}", c.model_type, what, layers, s.tp), decode ? "decode" : "prefill",
                    decode ? B : T);
}

json encoder(const HfConfig& c, const ModelStep& s) {
    Builder b(c, s);
    const int64_t B = s.batch, S = s.seq, T = B * S, H = c.hidden, I = c.intermediate, heads = c.heads, D = c.head_dim;
    const bool whole = s.layers < 0;
    const bool tp = s.tp > 1;
    std::string h;
    if (whole) {
        std::string ids = b.tensor("ids", {T}, "input", -1, "int32");
        std::string pos = b.tensor("position_ids", {T}, "input", -1, "int32");
        std::string type = b.tensor("token_type_ids", {T}, "input", -1, "int32");
        // One statement each: the ops are emitted in this order (arguments' order is unspecified).
        std::string word = b.embedding("embed.word", ids, c.vocab, T, H);
        std::string position = b.embedding("embed.pos", pos, c.max_positions, T, H);
        std::string token_type = b.embedding("embed.type", type, c.type_vocab, T, H);
        std::string e = b.binary("add", "embed.add_pos", word, position, "a", "b", {T, H}, -1);
        e = b.binary("add", "embed.add_type", e, token_type, "a", "b", {T, H}, -1);
        h = b.norm("layernorm", "embed.norm", e, T, H);
    } else {
        h = b.tensor("hidden_in", {T, H}, "input");
    }
    // A row-parallel linear's bias is added once, after the all-reduce (on one rank: in the linear).
    auto row_parallel = [&](const std::string& name, const std::string& x, int64_t k) {
        std::string y = b.all_reduce(name + "_all_reduce", b.linear(name, x, T, k, H, 0, !tp), T, H);
        if (!tp)
            return y;
        return b.binary("add", name + ".bias", y, b.tensor(name + ".bias.w", {H}, "weight"), "a", "b", {T, H}, -1);
    };
    const int64_t L = whole ? c.layers : s.layers;
    for (int64_t i = 0; i < L; ++i) {
        b.layer(int(i));
        std::string p = fmt::format("l{}.", i);
        std::string q = b.linear(p + "query", h, T, H, H, 1, true);
        std::string k = b.linear(p + "key", h, T, H, H, 1, true);
        std::string v = b.linear(p + "value", h, T, H, H, 1, true);
        std::string a = b.tensor(p + "attn.o", {T, heads * D}, "activation", 1);
        b.op({{"op", "attention"}, {"name", p + "attn"}, {"q", q}, {"k", k}, {"v", v}, {"o", a}, {"heads", heads},
              {"kv_heads", heads}, {"batch", B}, {"causal", false}});
        std::string o = row_parallel(p + "attn_out", a, H);
        std::string h1 = b.norm("layernorm", p + "attn_norm", b.binary("add", p + "attn_residual", h, o, "a", "b", {T, H}, -1), T, H);
        std::string f = b.unary("gelu", p + "gelu", b.linear(p + "intermediate", h1, T, H, I, 1, true), {T, I}, 1);
        std::string f2 = row_parallel(p + "output", f, I);
        h = b.norm("layernorm", p + "output_norm", b.binary("add", p + "output_residual", h1, f2, "a", "b", {T, H}, -1), T, H);
    }
    b.layer(-1);
    b.rename_output(h);
    std::string layers = whole ? "whole encoder" : fmt::format("{} layer{}", L, L == 1 ? "" : "s");
    return b.finish(fmt::format("{} encoder batch {} seq {}, {}, tp {}", c.model_type, B, S, layers, s.tp), "encoder", T);
}

} // namespace

HfConfig hf_config_from_json(const json& j, const std::string& file) {
    if (!j.is_object())
        throw GraphError(file + ": a Hugging Face config.json is a JSON object");
    HfConfig c;
    c.file = file;
    if (!j.contains("model_type") || !j["model_type"].is_string())
        throw GraphError(file + ": missing key 'model_type' (llama, mistral, qwen2, bert, roberta)");
    c.model_type = j["model_type"].get<std::string>();
    if (c.model_type == "llama" || c.model_type == "mistral" || c.model_type == "qwen2")
        c.family = "decoder";
    else if (c.model_type == "bert" || c.model_type == "roberta")
        c.family = "encoder";
    else
        throw GraphError(fmt::format("{}: model_type '{}' is not built here (decoders: llama, mistral, qwen2; encoders: "
                                     "bert, roberta)",
                                     file, c.model_type));
    c.hidden = key_int(j, file, "hidden_size");
    c.heads = key_int(j, file, "num_attention_heads");
    c.kv_heads = key_int(j, file, "num_key_value_heads", c.heads);
    c.intermediate = key_int(j, file, "intermediate_size");
    c.layers = key_int(j, file, "num_hidden_layers");
    c.vocab = key_int(j, file, "vocab_size");
    c.max_positions = key_int(j, file, "max_position_embeddings", 0);
    if (c.hidden % c.heads && !j.contains("head_dim"))
        throw GraphError(fmt::format("{}: hidden_size {} is not a multiple of num_attention_heads {} (and no head_dim)",
                                     file, c.hidden, c.heads));
    c.head_dim = key_int(j, file, "head_dim", c.hidden / c.heads);
    if (c.heads % c.kv_heads)
        throw GraphError(fmt::format("{}: num_attention_heads {} is not a multiple of num_key_value_heads {}", file,
                                     c.heads, c.kv_heads));
    const char* eps_key = c.family == "decoder" ? "rms_norm_eps" : "layer_norm_eps";
    if (j.contains(eps_key) && j[eps_key].is_number())
        c.eps = j[eps_key].get<double>();
    c.qkv_bias = c.model_type == "qwen2" || (j.contains("attention_bias") && j["attention_bias"] == true);
    if (c.family == "encoder") {
        c.type_vocab = key_int(j, file, "type_vocab_size", 2);
        if (!c.max_positions)
            throw GraphError(file + ": missing key 'max_position_embeddings'");
    }
    return c;
}

HfConfig read_hf_config(const std::string& path) {
    return hf_config_from_json(read_json_file<GraphError>(path, "cannot open the model config (--hf-config: a Hugging "
                                                                "Face config.json, or a shipped name: nctlm model --list)"),
                               path);
}

json build_model_graph(const HfConfig& c, const ModelStep& s) {
    auto need = [&](bool ok, const std::string& msg) {
        if (!ok)
            throw GraphError(msg);
    };
    need(s.phase == "decode" || s.phase == "prefill", "--phase " + s.phase + ": expected prefill or decode");
    need(s.batch >= 1, "--batch must be at least 1");
    need(s.tp >= 1 && s.dp >= 1, "--tp and --dp must be at least 1");
    need(s.layers == -1 || s.layers >= 1, "--layers must be at least 1");
    if (c.family == "encoder")
        need(s.phase == "prefill", fmt::format("{}: {} is an encoder: it has no decode step (--phase prefill)", c.file,
                                               c.model_type));
    if (s.phase == "decode")
        need(s.context >= 1, "--phase decode needs --context C (positions attended, the new token's included)");
    else
        need(s.seq >= 1, "--phase prefill needs --seq S (tokens per sequence)");
    if (c.max_positions && (s.phase == "decode" ? s.context : s.seq) > c.max_positions)
        throw GraphError(fmt::format("{}: max_position_embeddings is {}: --{} {} is past it", c.file, c.max_positions,
                                     s.phase == "decode" ? "context" : "seq", s.phase == "decode" ? s.context : s.seq));
    auto divides = [&](const char* key, int64_t v) {
        if (v % s.tp)
            throw GraphError(fmt::format("{}: {} = {} is not divisible by --tp {}: tensor parallelism gives each rank a "
                                         "whole number of them",
                                         c.file, key, v, s.tp));
    };
    divides("num_attention_heads", c.heads);
    if (c.family == "decoder")
        divides("num_key_value_heads", c.kv_heads);
    divides("intermediate_size", c.intermediate);
    return c.family == "decoder" ? decoder(c, s) : encoder(c, s);
}

} // namespace nctlm::graph
