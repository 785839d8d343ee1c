#include "models/graph/graph_schema.h"

#include "models/graph/graph.h"

#include <fmt/format.h>

namespace nctlm::graph {

using json = nlohmann::json;

namespace {

json attr_schema(AttrKind k) {
    switch (k) {
    case AttrKind::Integer:
        return {{"type", "integer"}};
    case AttrKind::Number:
        return {{"type", "number"}};
    case AttrKind::Bool:
        return {{"type", "boolean"}};
    case AttrKind::Algorithm:
        return {{"enum", {"ring", "tree", "auto"}}};
    case AttrKind::Pairs:
        return {{"type", "array"},
                {"minItems", 1},
                {"items", {{"type", "array"}, {"items", {{"type", "integer"}, {"minimum", 0}}}, {"minItems", 2}, {"maxItems", 2}}}};
    }
    return json::object();
}

const char* attr_text(AttrKind k) {
    switch (k) {
    case AttrKind::Integer:
        return "integer";
    case AttrKind::Number:
        return "number";
    case AttrKind::Bool:
        return "bool";
    case AttrKind::Algorithm:
        return "ring, tree or auto";
    case AttrKind::Pairs:
        return "[[src, dst], ...]";
    }
    return "?";
}

} // namespace

json graph_schema() {
    json tensor_name = {{"type", "string"}, {"minLength", 1}};
    json ops = json::array();
    for (auto& s : op_specs()) {
        json props = {{"op", {{"const", s.name}}},
                      {"name", {{"type", "string"}}},
                      {"layer", {{"type", "integer"}, {"minimum", 0}}},
                      {"after", {{"type", "array"}, {"items", {{"type", "string"}}}}}};
        json required = json::array({"op"});
        for (const auto* roles : {&s.inputs, &s.outputs})
            for (auto& r : *roles) {
                props[r.name] = tensor_name;
                props[r.name]["description"] = r.doc;
                if (r.required)
                    required.push_back(r.name);
            }
        for (auto& a : s.attrs) {
            props[a.name] = attr_schema(a.kind);
            props[a.name]["description"] = a.doc;
            if (!a.default_value)
                required.push_back(a.name);
            else
                props[a.name]["default"] = json::parse(a.default_value);
        }
        ops.push_back({{"type", "object"},
                       {"description", s.doc},
                       {"properties", props},
                       {"required", required},
                       {"additionalProperties", false}});
    }
    json tensor = {{"type", "object"},
                   {"required", {"name", "shape"}},
                   {"additionalProperties", false},
                   {"properties",
                    {{"name", tensor_name},
                     {"shape", {{"type", "array"}, {"minItems", 1}, {"items", {{"type", "integer"}, {"minimum", 1}}}}},
                     {"dtype", {{"enum", {"bf16", "fp16", "fp8", "fp32", "int32"}}, {"default", "bf16"}}},
                     {"kind", {{"enum", {"input", "weight", "kv_cache", "activation", "output"}}, {"default", "activation"}}},
                     {"split", {{"type", "integer"}, {"minimum", 0}}}}}};
    json placement = {{"type", "object"},
                      {"additionalProperties", false},
                      {"properties",
                       {{"tp", {{"type", "integer"}, {"minimum", 1}, {"default", 1}}},
                        {"dp", {{"type", "integer"}, {"minimum", 1}, {"default", 1}}},
                        {"cores", {{"type", "array"}, {"items", {{"type", "integer"}, {"minimum", 0}}}}},
                        {"chips", {{"type", "array"}, {"items", {{"type", "integer"}, {"minimum", 0}}}, {"default", {0}}}}}}};
    return {{"$schema", "https://json-schema.org/draft/2020-12/schema"},
            {"title", "nctlm op graph (docs/models.md)"},
            {"type", "object"},
            {"required", {"format", "version", "tensors", "ops"}},
            {"additionalProperties", false},
            {"properties",
             {{"format", {{"const", "nctlm-graph"}}},
              {"version", {{"const", kGraphFormatVersion}}},
              {"name", {{"type", "string"}}},
              {"source", {{"type", "string"}}},
              {"phase", {{"enum", {"decode", "prefill", "encoder", "other"}}, {"default", "other"}}},
              {"tokens", {{"type", "integer"}, {"minimum", 0}}},
              {"layers", {{"type", "integer"}, {"minimum", 0}}},
              {"placement", placement},
              {"tensors", {{"type", "array"}, {"items", tensor}}},
              {"ops", {{"type", "array"}, {"items", {{"oneOf", ops}}}}}}}};
}

std::string graph_format_markdown() {
    std::string s = fmt::format("### The ops (op graph format version {})\n\n"
                                "Every op names its tensors by role and takes the attributes below (docs/models.md). "
                                "Shapes are global; a tensor's `split` dimension is divided over the `placement.tp` ranks.\n\n"
                                "| op | tensors in | tensors out | attributes | what |\n| --- | --- | --- | --- | --- |\n",
                                kGraphFormatVersion);
    for (auto& spec : op_specs()) {
        auto roles = [](const std::vector<OpRole>& rs) {
            std::string t;
            for (auto& r : rs)
                t += fmt::format("{}`{}`{}{}", t.empty() ? "" : ", ", r.name, r.required ? "" : " (optional)",
                                 r.updated ? " (updated)" : "");
            return t;
        };
        std::string attrs;
        for (auto& a : spec.attrs)
            attrs += fmt::format("{}`{}` {}{}", attrs.empty() ? "" : ", ", a.name, attr_text(a.kind),
                                 a.default_value ? fmt::format(" = {}", a.default_value) : " (required)");
        s += fmt::format("| `{}`{} | {} | {} | {} | {} |\n", spec.name, spec.collective ? " (collective)" : "",
                         roles(spec.inputs), roles(spec.outputs), attrs.empty() ? "-" : attrs, spec.doc);
    }
    return s;
}

} // namespace nctlm::graph
