// The op graph format described from the loader's own table: a JSON Schema (draft 2020-12) for
// editors and tools (`nctlm describe graph --schema`) and a markdown table of the ops
// (`nctlm describe graph`). Pure C++.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace nctlm::graph {

nlohmann::json graph_schema();
std::string graph_format_markdown();

} // namespace nctlm::graph
