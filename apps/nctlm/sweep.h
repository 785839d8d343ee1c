// `nctlm sweep`: run a sweep spec's points, each in its own process (SystemC elaborates once per
// process), locally with -j workers or as one Slurm array job; merge rows into results.csv/jsonl.
#pragma once

#include <string>
#include <vector>

namespace nctlm {

// Exit status: 0 every point ok, 2 bad spec or usage, 3 some point failed/missing, 130 interrupted.
int cmd_sweep(const std::vector<std::string>& args);

// scripts/NAME in the source tree next to this binary, or "" (the plot and tornado helpers).
std::string find_script(const std::string& name);
// Runs every command (argv[0] a path), at most `workers` at a time; their exit codes, in order.
std::vector<int> run_all(const std::vector<std::vector<std::string>>& commands, size_t workers);

// `nctlm sensitivity` and `nctlm uncertainty` (study.cpp): studies run through cmd_sweep.
int cmd_sensitivity(const std::vector<std::string>& args);
int cmd_uncertainty(const std::vector<std::string>& args);

} // namespace nctlm
