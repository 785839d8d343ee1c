// `nctlm sweep`: run a sweep spec's points, each in its own process (SystemC elaborates once per
// process), locally with -j workers or as one Slurm array job; merge rows into results.csv/jsonl.
#pragma once

#include <string>
#include <vector>

namespace nctlm {

// Exit status: 0 every point ok, 2 bad spec or usage, 3 some point failed/missing, 130 interrupted.
int cmd_sweep(const std::vector<std::string>& args);

} // namespace nctlm
