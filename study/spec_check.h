// A sweep spec checked against this executable before any point runs, each problem reported once
// at its line in the spec (not per point, as a --set the user never typed): the testbench, every
// config key the spec sets or varies, and the plot fields. A plot field that is neither an axis
// nor a column of every run must be a result: those are checked against the first finished
// point's results (check_plot_results), before the other points run.
#pragma once

#include "study/sweep_spec.h"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace nctlm::sweep {

// Throws ConfigError "spec.yaml:LINE:COL: ..." with a did-you-mean.
void check_spec(const Spec& spec);

// Plot fields that can only be results (not axes, not the run columns such as sim_time_ns).
std::vector<std::string> plot_result_fields(const Spec& spec);
// Throws ConfigError at the plot field's line if a result field is not in `row`'s results.
void check_plot_results(const Spec& spec, const nlohmann::ordered_json& row);

} // namespace nctlm::sweep
