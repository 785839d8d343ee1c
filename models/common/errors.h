// Simulation-time errors (address errors, deadlock, out-of-range accesses): recorded, reported
// through SystemC's report handler as SC_ERROR with a message type under "/nctlm/", then the
// simulation stops and the run exits non-zero with every message.
//
// After init_kernel() an "/nctlm/..." error is logged (SC_LOG) rather than thrown, so the run
// can finish its stats and list every error; a user who prefers an exception at the failing
// transaction sets sc_report_handler::set_actions("/nctlm/dma/address", SC_ERROR, SC_THROW).
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace nctlm {

// A simulation error found before the kernel runs (exit 3, like the recorded ones).
struct SimulationError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Message types (the first argument of SC_REPORT_*), one per kind of model error.
namespace msg {
inline constexpr const char* kSim = "/nctlm/sim";                   // generic
inline constexpr const char* kDmaAddress = "/nctlm/dma/address";    // a burst's address maps nowhere
inline constexpr const char* kPeRange = "/nctlm/pe/range";          // SBUF/PSUM access out of range
inline constexpr const char* kHostRuntime = "/nctlm/host/runtime";  // runtime misuse (missing tensor...)
} // namespace msg

void sim_error(const std::string& message, const char* msg_type = msg::kSim);  // records, reports, sc_stop()
const std::vector<std::string>& sim_errors();

} // namespace nctlm
