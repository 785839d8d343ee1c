// An op graph (docs/models.md, format version 1): a model step as tensors and ops over NeuronCores.
// Tensors have a global shape, a dtype, a kind (where they live: weights and the KV cache stay in
// HBM for the whole run, activations from their producer to their last consumer) and optionally a
// dimension split over the tensor-parallel group. Ops run SPMD on every rank of the group, each on
// its own shards (the per-rank shapes); collectives move data between ranks. Loaded from JSON and
// checked here (keys, names, dependencies, every op's shapes); what needs a platform (cores, HBM
// capacity, SBUF tiling) is checked by the lowering (graph_lowering.h). Pure C++.
#pragma once

#include "models/kernel/kernel_program.h"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

namespace nctlm::graph {

inline constexpr int kGraphFormatVersion = 1;

// A problem in a graph: the message names the file, the JSON path and the op or tensor.
struct GraphError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

enum class TensorKind { Input, Weight, KvCache, Activation, Output };
const char* tensor_kind_name(TensorKind k);

struct GraphTensor {
    std::string name, path;
    std::vector<int64_t> shape;       // global (logical) shape, row-major
    kernel::ElemType type;
    TensorKind kind = TensorKind::Activation;
    int split = -1;                   // dimension sharded over the tensor-parallel ranks; -1: each rank holds it whole
    std::vector<int64_t> rank_shape;  // what one rank holds (shape with dimension `split` divided by tp)
    uint64_t rank_bytes = 0;
    int producer = -1;                // op index, -1 for inputs, weights and caches
    std::vector<int> consumers;       // op indices that read it
    bool persistent() const { return kind == TensorKind::Input || kind == TensorKind::Weight || kind == TensorKind::KvCache; }
    int64_t rank_elements() const;
};

enum class OpKind {
    Linear, Matmul, BatchMatmul, Attention, AttentionDecode, RmsNorm, LayerNorm, Rope, Softmax, Add, Mul, Silu,
    Gelu, SiluMul, Embedding, AllReduce, AllGather, ReduceScatter, SendRecv
};

// Every op of the format with its tensors and attributes: the one table the loader, the JSON
// Schema and `nctlm describe graph` read.
enum class AttrKind { Integer, Number, Bool, Algorithm, Pairs };
struct OpRole {
    const char* name;
    bool required;
    bool updated;  // read and written in place (a KV cache): an input role the op also writes
    const char* doc;
};
struct OpAttr {
    const char* name;
    AttrKind kind;
    const char* default_value;  // JSON text; nullptr: required
    const char* doc;
};
struct OpSpec {
    OpKind op;
    const char* name;
    bool collective;
    const char* doc;
    std::vector<OpRole> inputs, outputs;
    std::vector<OpAttr> attrs;
};
const std::vector<OpSpec>& op_specs();
const OpSpec& op_spec(OpKind op);

struct GraphOp {
    std::string name, path;
    OpKind op = OpKind::Linear;
    std::vector<int> inputs, outputs;  // tensor index per role of the spec, -1 for an absent optional role
    nlohmann::json attrs;              // every attribute of the spec, defaults filled in
    int layer = -1;                    // the decoder/encoder layer it belongs to (reports), -1: none
    std::vector<int> after;            // explicit dependencies besides the tensors (op indices)
    int64_t integer(const char* attr) const { return attrs.at(attr).get<int64_t>(); }
    double number(const char* attr) const { return attrs.at(attr).get<double>(); }
    bool flag(const char* attr) const { return attrs.at(attr).get<bool>(); }
    std::string text(const char* attr) const { return attrs.at(attr).get<std::string>(); }
    int input(const char* role) const;   // tensor index, -1 if absent
    int output(const char* role) const;
    const OpSpec& spec() const { return op_spec(op); }
    std::string where() const { return path + " (" + name + ")"; }
};

// Where the graph runs: `tp` ranks per replica (tensor parallelism), `dp` replicas (data
// parallelism), rank r of replica d on NeuronCore cores[d * tp + r] of chip chips[d * tp + r]
// (`chips` one entry: every rank on that chip). Ranks on different chips of a multi-chip platform
// (docs/models/link.md) reach each other's HBM over NeuronLink.
struct Placement {
    uint32_t tp = 1, dp = 1;
    std::vector<uint32_t> cores;  // tp x dp entries (default 0, 1, ...)
    std::vector<uint32_t> chips = {0};  // one entry, or tp x dp
    uint32_t ranks() const { return tp * dp; }
    uint32_t chip(uint32_t rank) const { return chips.size() == 1 ? chips[0] : chips.at(rank); }
};

struct Graph {
    std::string name = "graph", source, file;
    std::string phase = "other";  // decode | prefill | encoder | other: how tokens/s are counted
    int64_t tokens = 0;           // tokens one replica produces (decode) or processes per run; 0: unknown
    int64_t layers = 0;           // layers of the model (informational), 0: unknown
    Placement placement;
    std::vector<GraphTensor> tensors;
    std::vector<GraphOp> ops;
    std::vector<int> order;  // ops in a dependency order (the schedule every rank follows)

    static Graph from_json(const nlohmann::json& j, const std::string& file);  // throws GraphError
    static Graph load(const std::string& path);                                // throws GraphError
    int find_tensor(const std::string& name) const;                            // -1 if absent
};

// Checks one op's shapes on one rank (graph_shapes.cpp); throws GraphError naming the op and role.
void check_op_shapes(const Graph& g, const GraphOp& op);

} // namespace nctlm::graph
