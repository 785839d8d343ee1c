// The plots a sweep spec asks for, drawn by scripts/plot (Debian's python3-matplotlib) once the
// rows are in, several at once.
#pragma once

#include "study/sweep_output.h"

#include <nlohmann/json.hpp>
#include <string>

namespace nctlm::sweep {

// Draws every plot of `plots` (the manifest's list) into `out`; a failed plot is reported on
// stderr with the command that reruns it, and does not fail the sweep.
void make_plots(const OutDir& out, const std::string& name, const nlohmann::ordered_json& plots, size_t workers = 2);

} // namespace nctlm::sweep
