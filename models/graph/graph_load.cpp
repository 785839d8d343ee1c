// Loading an op graph from JSON: keys, names, placement, tensors, ops, dependencies, shapes.
#include "models/common/config.h"
#include "models/common/json_file.h"
#include "models/graph/graph.h"

#include <algorithm>
#include <fmt/format.h>
#include <fstream>
#include <map>
#include <queue>
#include <set>

namespace nctlm::graph {

using json = nlohmann::json;

namespace {

class Loader : JsonReader<GraphError> {
public:
    explicit Loader(std::string file) : JsonReader(std::move(file)) {}

    Graph run(const json& j) {
        g_.file = file_;
        if (!j.is_object())
            fail("", "a graph is a JSON object");
        check_keys(j, "", {"format", "version", "name", "source", "phase", "tokens", "layers", "placement", "tensors", "ops"});
        if (!j.contains("format") || j["format"] != "nctlm-graph")
            fail("/format", "expected \"format\": \"nctlm-graph\"");
        if (!j.contains("version") || !j["version"].is_number_integer())
            fail("/version", "expected \"version\": 1");
        if (j["version"].get<int64_t>() != kGraphFormatVersion)
            fail("/version", fmt::format("version {} is not read by this build (it reads version {})", j["version"].dump(),
                                         kGraphFormatVersion));
        if (j.contains("name"))
            g_.name = string(j["name"], "/name");
        if (j.contains("source"))
            g_.source = string(j["source"], "/source");
        if (j.contains("phase")) {
            g_.phase = string(j["phase"], "/phase");
            if (g_.phase != "decode" && g_.phase != "prefill" && g_.phase != "encoder" && g_.phase != "other")
                fail("/phase", "phase is decode, prefill, encoder or other, not '" + g_.phase + "'");
        }
        if (j.contains("tokens"))
            g_.tokens = int64_t(whole(j["tokens"], "/tokens", 0, int64_t(1) << 40, "tokens is a count >= 0"));
        if (j.contains("layers"))
            g_.layers = int64_t(whole(j["layers"], "/layers", 0, 1 << 20, "layers is a count >= 0"));
        placement(j.contains("placement") ? j["placement"] : json::object());
        const json& tensors = array(field(j, "tensors", ""), "/tensors");
        for (size_t i = 0; i < tensors.size(); ++i)
            tensor(tensors[i], fmt::format("/tensors/{}", i));
        const json& ops = array(field(j, "ops", ""), "/ops");
        for (size_t i = 0; i < ops.size(); ++i)
            op(ops[i], fmt::format("/ops/{}", i));
        for (size_t i = 0; i < ops.size(); ++i)
            if (ops[i].contains("after"))
                after(ops[i]["after"], g_.ops[i]);
        dependencies();
        for (auto& o : g_.ops)
            check_op_shapes(g_, o);
        return std::move(g_);
    }

private:

    void placement(const json& j) {
        const std::string path = "/placement";
        if (!j.is_object())
            fail(path, "placement is an object: {\"tp\": N, \"dp\": R, \"cores\": [...], \"chips\": [0]}");
        check_keys(j, path, {"tp", "dp", "cores", "chips"});
        Placement& p = g_.placement;
        if (j.contains("tp"))
            p.tp = uint32_t(whole(j["tp"], path + "/tp", 1, 4096, "tp is the tensor-parallel degree, 1..4096"));
        if (j.contains("dp"))
            p.dp = uint32_t(whole(j["dp"], path + "/dp", 1, 4096, "dp is the number of data-parallel replicas, 1..4096"));
        if (j.contains("chips")) {
            const json& c = array(j["chips"], path + "/chips");
            p.chips.clear();
            for (size_t i = 0; i < c.size(); ++i)
                p.chips.push_back(uint32_t(whole(c[i], fmt::format("{}/chips/{}", path, i), 0, 65535, "a chip index")));
            if (p.chips.size() != 1 && p.chips.size() != p.ranks())
                fail(path + "/chips", fmt::format("{} chips listed: one (every rank on it) or one per rank (tp x dp = {} x "
                                                  "{} = {})",
                                                  p.chips.size(), p.tp, p.dp, p.ranks()));
        }
        if (j.contains("cores")) {
            const json& c = array(j["cores"], path + "/cores");
            if (c.size() != p.ranks())
                fail(path + "/cores", fmt::format("{} cores listed but tp x dp = {} x {} = {} ranks", c.size(), p.tp, p.dp,
                                                  p.ranks()));
            std::set<std::pair<uint32_t, uint32_t>> seen;  // (chip, core)
            for (size_t i = 0; i < c.size(); ++i) {
                uint32_t core = uint32_t(whole(c[i], fmt::format("{}/cores/{}", path, i), 0, 65535, "a core index"));
                if (!seen.insert({p.chip(uint32_t(i)), core}).second)
                    fail(fmt::format("{}/cores/{}", path, i),
                         fmt::format("core {} of chip {} listed twice", core, p.chip(uint32_t(i))));
                p.cores.push_back(core);
            }
        } else {
            for (uint32_t r = 0; r < p.ranks(); ++r)
                p.cores.push_back(r);
        }
    }

    void tensor(const json& j, const std::string& path) {
        if (!j.is_object())
            fail(path, "a tensor is an object");
        check_keys(j, path, {"name", "shape", "dtype", "kind", "split"});
        GraphTensor t;
        t.path = path;
        t.name = string(field(j, "name", path), path + "/name");
        if (t.name.empty())
            fail(path + "/name", "a tensor has a name");
        if (names_.count(t.name))
            fail(path + "/name", "tensor '" + t.name + "' declared twice");
        const json& shape = array(field(j, "shape", path), path + "/shape");
        if (shape.empty())
            fail(path + "/shape", "a tensor has at least one dimension");
        for (size_t i = 0; i < shape.size(); ++i)
            t.shape.push_back(int64_t(whole(shape[i], fmt::format("{}/shape/{}", path, i), 1, int64_t(1) << 40,
                                            "a dimension is an integer >= 1")));
        std::string dtype = j.contains("dtype") ? string(j["dtype"], path + "/dtype") : "bf16";
        try {
            t.type = kernel::parse_elem_type(dtype);
        } catch (const kernel::KernelError& e) {
            fail(path + "/dtype", e.what());
        }
        std::string kind = j.contains("kind") ? string(j["kind"], path + "/kind") : "activation";
        static const std::map<std::string, TensorKind> kinds = {{"input", TensorKind::Input},
                                                                 {"weight", TensorKind::Weight},
                                                                 {"kv_cache", TensorKind::KvCache},
                                                                 {"activation", TensorKind::Activation},
                                                                 {"output", TensorKind::Output}};
        auto k = kinds.find(kind);
        if (k == kinds.end())
            fail(path + "/kind", "kind is input, weight, kv_cache, activation or output, not '" + kind + "'");
        t.kind = k->second;
        t.rank_shape = t.shape;
        if (j.contains("split") && !j["split"].is_null()) {
            t.split = int(whole(j["split"], path + "/split", 0, int64_t(t.shape.size()) - 1,
                                "split is a dimension of the tensor (0-based)"));
            uint32_t tp = g_.placement.tp;
            if (t.shape[size_t(t.split)] % tp)
                fail(path + "/split", fmt::format("tensor '{}': dimension {} ({}) is not divisible by the tensor-parallel "
                                                  "degree {} (placement.tp)",
                                                  t.name, t.split, t.shape[size_t(t.split)], tp));
            t.rank_shape[size_t(t.split)] /= tp;
        }
        uint64_t bytes = t.type.bytes;
        for (int64_t d : t.rank_shape)
            if (__builtin_mul_overflow(bytes, uint64_t(d), &bytes))
                fail(path + "/shape", "tensor '" + t.name + "' is too large");
        t.rank_bytes = bytes;
        names_[t.name] = int(g_.tensors.size());
        g_.tensors.push_back(std::move(t));
    }

    int tensor_ref(const json& j, const std::string& path) const {
        std::string name = string(j, path);
        auto it = names_.find(name);
        if (it == names_.end()) {
            std::vector<std::string> all;
            for (auto& [n, i] : names_)
                all.push_back(n);
            std::string hint = did_you_mean(name, all);
            fail(path, "unknown tensor '" + name + "'" + (hint.empty() ? "" : "; did you mean '" + hint + "'?"));
        }
        return it->second;
    }

    void op(const json& j, const std::string& path) {
        if (!j.is_object())
            fail(path, "an op is an object");
        std::string kind = string(field(j, "op", path), path + "/op");
        const OpSpec* spec = nullptr;
        std::vector<std::string> kinds;
        for (auto& s : op_specs()) {
            kinds.push_back(s.name);
            if (kind == s.name)
                spec = &s;
        }
        if (!spec) {
            std::string hint = did_you_mean(kind, kinds);
            fail(path + "/op", "unknown op '" + kind + "'" + (hint.empty() ? "" : "; did you mean '" + hint + "'?") +
                                   " (nctlm describe graph lists the ops)");
        }
        GraphOp o;
        o.op = spec->op;
        o.path = path;
        o.name = j.contains("name") ? string(j["name"], path + "/name") : fmt::format("{}{}", spec->name, g_.ops.size());
        if (!op_names_.insert(o.name).second)
            fail(path + "/name", "op '" + o.name + "' named twice");
        std::vector<std::string> keys = {"op", "name", "layer", "after"};
        for (auto& r : spec->inputs)
            keys.push_back(r.name);
        for (auto& r : spec->outputs)
            keys.push_back(r.name);
        for (auto& a : spec->attrs)
            keys.push_back(a.name);
        check_keys(j, path, keys);
        if (j.contains("layer"))
            o.layer = int(whole(j["layer"], path + "/layer", 0, 1 << 20, "layer is an index >= 0"));
        auto roles = [&](const std::vector<OpRole>& spec_roles, const char* what, std::vector<int>& out) {
            for (auto& r : spec_roles) {
                if (!j.contains(r.name)) {
                    if (r.required)
                        fail(path, fmt::format("{} op '{}': missing {} '{}' ({})", spec->name, o.name, what, r.name, r.doc));
                    out.push_back(-1);
                    continue;
                }
                out.push_back(tensor_ref(j[r.name], path + "/" + r.name));
            }
        };
        roles(spec->inputs, "input", o.inputs);
        roles(spec->outputs, "output", o.outputs);
        o.attrs = json::object();
        for (auto& a : spec->attrs) {
            std::string at = path + "/" + a.name;
            json v;
            if (j.contains(a.name))
                v = j[a.name];
            else if (a.default_value)
                v = json::parse(a.default_value);
            else
                fail(path, fmt::format("{} op '{}': missing attribute '{}' ({})", spec->name, o.name, a.name, a.doc));
            switch (a.kind) {
            case AttrKind::Integer:
                if (!v.is_number_integer())
                    fail(at, "expected an integer");
                break;
            case AttrKind::Number:
                if (!v.is_number())
                    fail(at, "expected a number");
                v = v.get<double>();
                break;
            case AttrKind::Bool:
                if (!v.is_boolean())
                    fail(at, "expected true or false");
                break;
            case AttrKind::Algorithm:
                if (!v.is_string() || (v != "ring" && v != "tree" && v != "auto"))
                    fail(at, "algorithm is \"ring\", \"tree\" or \"auto\"");
                if (o.op == OpKind::ReduceScatter && v == "tree")
                    fail(at, "reduce_scatter runs the ring algorithm only");
                break;
            case AttrKind::Pairs:
                if (!v.is_array() || v.empty())
                    fail(at, "pairs is a list of [src, dst] rank pairs");
                for (size_t i = 0; i < v.size(); ++i)
                    if (!v[i].is_array() || v[i].size() != 2 || !v[i][0].is_number_integer() ||
                        !v[i][1].is_number_integer() || v[i][0] == v[i][1])
                        fail(fmt::format("{}/{}", at, i), "a pair is [src, dst] of two different ranks");
                break;
            }
            o.attrs[a.name] = v;
        }
        g_.ops.push_back(std::move(o));
    }

    void after(const json& j, GraphOp& o) {
        const std::string path = o.path + "/after";
        for (size_t i = 0; i < array(j, path).size(); ++i) {
            std::string name = string(j[i], fmt::format("{}/{}", path, i));
            int found = -1;
            for (size_t k = 0; k < g_.ops.size(); ++k)
                if (g_.ops[k].name == name)
                    found = int(k);
            if (found < 0)
                fail(fmt::format("{}/{}", path, i), "unknown op '" + name + "'");
            o.after.push_back(found);
        }
    }

    // Who writes and reads each tensor; the schedule: a dependency order, file order among ready ops.
    void dependencies() {
        std::vector<std::string> writer_role(g_.tensors.size());
        for (size_t i = 0; i < g_.ops.size(); ++i) {
            GraphOp& o = g_.ops[i];
            const OpSpec& s = o.spec();
            auto write = [&](int t, const char* role) {
                GraphTensor& gt = g_.tensors[size_t(t)];
                if (gt.kind == TensorKind::Input || gt.kind == TensorKind::Weight)
                    fail(o.path + "/" + role, fmt::format("{} op '{}' writes '{}', a tensor of kind {} (given before the "
                                                          "run, never written)",
                                                          s.name, o.name, gt.name, tensor_kind_name(gt.kind)));
                if (gt.producer >= 0)
                    fail(o.path + "/" + role, fmt::format("tensor '{}' is written by op '{}' and op '{}': one writer each",
                                                          gt.name, g_.ops[size_t(gt.producer)].name, o.name));
                gt.producer = int(i);
            };
            for (size_t r = 0; r < s.outputs.size(); ++r)
                if (o.outputs[r] >= 0)
                    write(o.outputs[r], s.outputs[r].name);
            for (size_t r = 0; r < s.inputs.size(); ++r)
                if (o.inputs[r] >= 0 && s.inputs[r].updated) {
                    if (g_.tensors[size_t(o.inputs[r])].kind != TensorKind::KvCache)
                        fail(o.path + "/" + s.inputs[r].name,
                             fmt::format("{} op '{}': '{}' is updated in place: its kind is kv_cache", s.name, o.name,
                                         g_.tensors[size_t(o.inputs[r])].name));
                    write(o.inputs[r], s.inputs[r].name);
                }
            std::set<int> seen;
            for (size_t r = 0; r < s.inputs.size(); ++r)
                if (o.inputs[r] >= 0 && seen.insert(o.inputs[r]).second)
                    g_.tensors[size_t(o.inputs[r])].consumers.push_back(int(i));
        }
        for (auto& t : g_.tensors)
            if ((t.kind == TensorKind::Activation || t.kind == TensorKind::Output) && t.producer < 0)
                fail(t.path, fmt::format("tensor '{}' ({}) is never written: give it an op that produces it, or make it an "
                                         "input",
                                         t.name, tensor_kind_name(t.kind)));
        // Kahn's algorithm, taking the lowest-index ready op: the file's order where it is valid.
        std::vector<std::vector<int>> next(g_.ops.size());
        std::vector<int> waiting(g_.ops.size(), 0);
        for (size_t i = 0; i < g_.ops.size(); ++i) {
            std::set<int> before(g_.ops[i].after.begin(), g_.ops[i].after.end());
            for (int t : g_.ops[i].inputs)
                if (t >= 0 && g_.tensors[size_t(t)].producer >= 0 && g_.tensors[size_t(t)].producer != int(i))
                    before.insert(g_.tensors[size_t(t)].producer);
            for (int b : before) {
                next[size_t(b)].push_back(int(i));
                ++waiting[i];
            }
        }
        std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
        for (size_t i = 0; i < g_.ops.size(); ++i)
            if (waiting[i] == 0)
                ready.push(int(i));
        while (!ready.empty()) {
            int i = ready.top();
            ready.pop();
            g_.order.push_back(i);
            for (int n : next[size_t(i)])
                if (--waiting[size_t(n)] == 0)
                    ready.push(n);
        }
        if (g_.order.size() != g_.ops.size())
            for (size_t i = 0; i < g_.ops.size(); ++i)
                if (waiting[i] > 0)
                    fail(g_.ops[i].path, fmt::format("op '{}' is part of a dependency cycle (through its inputs or 'after')",
                                                     g_.ops[i].name));
    }

    Graph g_;
    std::map<std::string, int> names_;
    std::set<std::string> op_names_;
};

} // namespace

Graph Graph::from_json(const json& j, const std::string& file) { return Loader(file).run(j); }

Graph Graph::load(const std::string& path) { return from_json(read_json_file<GraphError>(path), path); }

int Graph::find_tensor(const std::string& name) const {
    for (size_t i = 0; i < tensors.size(); ++i)
        if (tensors[i].name == name)
            return int(i);
    return -1;
}

} // namespace nctlm::graph
