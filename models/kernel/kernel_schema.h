// The kernel program format described from the loader's own tables: a JSON Schema (draft 2020-12)
// for editors and tools (`nctlm describe kernel --schema`) and a markdown summary of the ops
// (`nctlm describe kernel`). Pure C++.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace nctlm::kernel {

nlohmann::json kernel_schema();
std::string kernel_format_markdown();

} // namespace nctlm::kernel
