// Simulation-time errors (address errors, deadlock): recorded, then the simulation stops and the
// run exits non-zero with every message.
#pragma once

#include <string>
#include <vector>

namespace nctlm {

void sim_error(const std::string& message);  // records and calls sc_stop()
const std::vector<std::string>& sim_errors();

} // namespace nctlm
