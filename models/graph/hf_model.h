// The Hugging Face frontend (`nctlm model`, docs/models.md): a model's config.json (the fields a
// transformers config has: hidden_size, num_attention_heads, ...) and the step to simulate become
// an op graph. Decoders (model_type llama, mistral, qwen2): RMSNorm -> q/k/v projections -> RoPE ->
// GQA attention with a KV cache -> o projection -> all-reduce -> residual -> RMSNorm -> gate/up ->
// SiLU x up -> down -> all-reduce -> residual, Megatron-style tensor parallelism (q/k/v, gate, up
// split by columns, o and down by rows). Encoders (model_type bert, roberta): attention, two
// LayerNorms and a GELU MLP. Pure C++.
#pragma once

#include "models/graph/graph.h"

#include <nlohmann/json.hpp>
#include <string>

namespace nctlm::graph {

struct HfConfig {
    std::string file, model_type, family;  // family: decoder | encoder
    int64_t hidden = 0, heads = 0, kv_heads = 0, head_dim = 0, intermediate = 0, layers = 0, vocab = 0;
    int64_t max_positions = 0, type_vocab = 0;
    double eps = 1e-5;
    bool qkv_bias = false;  // qwen2: biases on q/k/v; bert: on every linear
    std::string dtype = "bf16";
};

// Reads the fields the builders need; throws GraphError naming the file and key.
HfConfig read_hf_config(const std::string& path);
HfConfig hf_config_from_json(const nlohmann::json& j, const std::string& file);

struct ModelStep {
    std::string phase = "decode";  // decode | prefill (an encoder's forward pass is a prefill)
    int64_t batch = 1;
    int64_t seq = 0;      // prefill: tokens per sequence
    int64_t context = 0;  // decode: positions attended, the new token's included
    uint32_t tp = 1, dp = 1;
    int64_t layers = -1;  // -1: the whole model (embeddings, every layer, final norm, LM head); else L layers only
};

// The op graph (format version 1) of one step; throws GraphError naming the option or config key
// that does not work (tp not dividing the heads, a decode of an encoder, ...).
nlohmann::json build_model_graph(const HfConfig& c, const ModelStep& s);

} // namespace nctlm::graph
