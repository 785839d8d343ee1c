// Simulation-time errors (address errors, deadlock): recorded, then the simulation stops and the
// run exits non-zero with every message.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace nctlm {

// A simulation error found before the kernel runs (exit 3, like the recorded ones).
struct SimulationError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

void sim_error(const std::string& message);  // records and calls sc_stop()
const std::vector<std::string>& sim_errors();

} // namespace nctlm
