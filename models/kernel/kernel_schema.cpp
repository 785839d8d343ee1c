#include "models/kernel/kernel_schema.h"

#include "models/kernel/kernel_program.h"

#include <fmt/format.h>

namespace nctlm::kernel {

using json = nlohmann::json;

namespace {

json ref(const char* def) { return {{"$ref", std::string("#/$defs/") + def}}; }

json field_schema(FieldKind k) {
    switch (k) {
    case FieldKind::Operand:
        return ref("operand");
    case FieldKind::OperandList:
        return {{"oneOf", json::array({ref("operand"), {{"type", "array"}, {"items", ref("operand")}, {"minItems", 1},
                                                        {"maxItems", 4}}})}};
    case FieldKind::OperandOrNumber:
        return {{"oneOf", json::array({ref("operand"), ref("number")})}};
    case FieldKind::Expr:
        return ref("expr");
    case FieldKind::Integer:
        return {{"type", "integer"}, {"minimum", 1}};
    case FieldKind::Number:
        return ref("number");
    case FieldKind::Bool:
        return {{"type", "boolean"}};
    case FieldKind::String:
        return {{"type", "string"}};
    case FieldKind::Engine:
        return {{"enum", {"vector", "scalar"}}};
    case FieldKind::Queue:
        return {{"oneOf", json::array({{{"type", "integer"}, {"minimum", 0}}, {{"const", "auto"}}})}};
    }
    return json::object();
}

const char* kind_text(FieldKind k) {
    switch (k) {
    case FieldKind::Operand:
        return "operand";
    case FieldKind::OperandList:
        return "operand or list";
    case FieldKind::OperandOrNumber:
        return "operand or number (or real expression)";
    case FieldKind::Expr:
        return "expression";
    case FieldKind::Integer:
        return "integer";
    case FieldKind::Number:
        return "number or real expression";
    case FieldKind::Bool:
        return "bool";
    case FieldKind::String:
        return "string";
    case FieldKind::Engine:
        return "vector|scalar";
    case FieldKind::Queue:
        return "queue or \"auto\"";
    }
    return "?";
}

} // namespace

json kernel_schema() {
    json expr = {{"oneOf", json::array({{{"type", "integer"}}, {{"type", "string"}}, {{"type", "boolean"}}})}};
    json range = {{"type", "array"}, {"items", ref("expr")}, {"minItems", 2}, {"maxItems", 2}};
    json chip = {{"type", "object"},
                 {"required", {"buf"}},
                 {"additionalProperties", false},
                 {"properties",
                  {{"buf", {{"type", "string"}}},
                   {"copy", ref("expr")},
                   {"p", ref("range")},
                   {"f", {{"type", "array"}, {"items", ref("range")}}}}}};
    json hbm = {{"type", "object"},
                {"required", {"tensor"}},
                {"additionalProperties", false},
                {"properties",
                 {{"tensor", {{"type", "string"}}},
                  {"offset", ref("expr")},
                  {"ap", {{"type", "array"}, {"items", ref("range")}, {"minItems", 1}, {"maxItems", 6}}},
                  {"index", {{"type", "array"}, {"items", ref("range")}, {"minItems", 1}}},
                  {"instance", ref("expr")}}}};
    json instructions = json::array();
    for (auto& spec : op_specs()) {
        json props = {{"op", {{"const", spec.name}}}, {"line", {{"type", "string"}}}, {"tile", ref("expr")}};
        json required = json::array({"op"});
        for (auto& f : spec.fields) {
            props[f.name] = field_schema(f.kind);
            if (f.required)
                required.push_back(f.name);
        }
        instructions.push_back({{"type", "object"},
                                {"description", fmt::format("{} ({}): {}", spec.name, spec.engine, spec.doc)},
                                {"required", required},
                                {"additionalProperties", false},
                                {"properties", props}});
    }
    json node = {{"oneOf", json::array({ref("instruction"), ref("loop"), ref("if")})}};
    json loop = {{"type", "object"},
                 {"required", {"loop", "trip", "body"}},
                 {"additionalProperties", false},
                 {"properties",
                  {{"loop", {{"type", "string"}}},
                   {"trip", ref("expr")},
                   {"start", ref("expr")},
                   {"step", ref("expr")},
                   {"kind", {{"enum", {"affine", "sequential"}}}},
                   {"line", {{"type", "string"}}},
                   {"body", ref("body")}}}};
    json cond = {{"type", "object"},
                 {"required", {"if", "body"}},
                 {"additionalProperties", false},
                 {"properties",
                  {{"if", ref("expr")}, {"body", ref("body")}, {"else", ref("body")}, {"line", {{"type", "string"}}}}}};
    json dtype = {{"enum", {"bf16", "fp16", "fp8", "fp32", "int32"}}};
    json placement = {{"oneOf", json::array({{{"enum", {"local", "interleaved"}}},
                                             {{"type", "object"},
                                              {"required", {"stack"}},
                                              {"properties", {{"stack", {{"type", "integer"}, {"minimum", 0}}}}},
                                              {"additionalProperties", false}}})}};
    json tensor = {{"type", "object"},
                   {"required", {"name", "shape", "dtype"}},
                   {"additionalProperties", false},
                   {"properties",
                    {{"name", {{"type", "string"}}},
                     {"shape", {{"type", "array"}, {"items", ref("expr")}, {"minItems", 1}}},
                     {"dtype", dtype},
                     {"kind", {{"enum", {"input", "output", "scratch"}}}},
                     {"placement", placement},
                     {"per_instance", {{"type", "boolean"}}},
                     {"offset", ref("expr")}}}};
    json buffer = {{"type", "object"},
                   {"required", {"name", "memory", "partitions", "shape", "dtype"}},
                   {"additionalProperties", false},
                   {"properties",
                    {{"name", {{"type", "string"}}},
                     {"memory", {{"enum", {"sbuf", "psum", "staging"}}}},
                     {"partitions", ref("expr")},
                     {"shape", {{"type", "array"}, {"items", ref("expr")}}},
                     {"dtype", dtype},
                     {"bufs", ref("expr")},
                     {"resident", {{"type", "boolean"}}}}}};
    return {{"$schema", "https://json-schema.org/draft/2020-12/schema"},
            {"title", fmt::format("nctlm kernel program, format version {} (docs/kernels.md)", kFormatVersion)},
            {"type", "object"},
            {"required", {"format", "version", "body"}},
            {"additionalProperties", false},
            {"properties",
             {{"format", {{"const", "nctlm-kernel"}}},
              {"version", {{"const", kFormatVersion}}},
              {"name", {{"type", "string"}}},
              {"source", {{"type", "string"}}},
              {"args", {{"type", "object"}, {"additionalProperties", {{"type", "integer"}}}}},
              {"grid", ref("expr")},
              {"tensors", {{"type", "array"}, {"items", tensor}}},
              {"buffers", {{"type", "array"}, {"items", buffer}}},
              {"body", ref("body")}}},
            {"$defs",
             {{"expr", expr},
              {"number", {{"oneOf", json::array({{{"type", "number"}},
                                                  {{"type", "string"},
                                                   {"description", "a real expression of the args: the expression "
                                                                   "grammar plus '/', '**' and decimals, e.g. "
                                                                   "\"1 / COLS\""}}})}}},
              {"range", range},
              {"operand", {{"oneOf", json::array({chip, hbm})}}},
              {"instruction", {{"oneOf", instructions}}},
              {"loop", loop},
              {"if", cond},
              {"body", {{"type", "array"}, {"items", node}}}}}};
}

std::string kernel_format_markdown() {
    std::string out = fmt::format(
        "### kernel program format, version {} (docs/kernels.md; JSON Schema: nctlm describe kernel --schema)\n\n"
        "| op | engine | fields (* required) | what |\n| --- | --- | --- | --- |\n",
        kFormatVersion);
    for (auto& spec : op_specs()) {
        std::string fields;
        for (auto& f : spec.fields)
            fields += fmt::format("{}`{}`{} ({}) ", fields.empty() ? "" : "", f.name, f.required ? "*" : "",
                                  kind_text(f.kind));
        out += fmt::format("| `{}` | {} | {}| {} |\n", spec.name, spec.engine, fields, spec.doc);
    }
    out += "\nEvery instruction may have `line` (\"file.py:12\") and `tile` (an expression grouping per-tile "
           "records). Control: `{\"loop\": VAR, \"trip\": expr, \"start\", \"step\", \"body\"}`, "
           "`{\"if\": expr, \"body\", \"else\"}`.\n";
    return out;
}

} // namespace nctlm::kernel
