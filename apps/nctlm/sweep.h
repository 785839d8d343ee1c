// The study commands of the CLI (apps/nctlm/study_cli.cpp): flags in, the study library
// (study/) does the work. Exit status: study/exit_status.h.
#pragma once

#include <string>
#include <vector>

namespace nctlm {

// `nctlm sweep`: 0 every point ok, 2 bad spec or usage, 3 some point failed/missing, 130 interrupted.
int cmd_sweep(const std::vector<std::string>& args);
// `nctlm sensitivity` and `nctlm uncertainty`: studies run through the sweep engine.
int cmd_sensitivity(const std::vector<std::string>& args);
int cmd_uncertainty(const std::vector<std::string>& args);

} // namespace nctlm
