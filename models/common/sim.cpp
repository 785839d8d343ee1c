#include "models/common/sim.h"

#include "models/common/errors.h"

#include <cstdlib>
#include <fmt/format.h>

namespace nctlm {

void init_kernel(bool warnings_are_errors) {
    static bool done = false;
    if (done)
        return;
    done = true;
    sc_core::sc_set_time_resolution(1, sc_core::SC_FS);
    // Our own sc_stop() after the event queue drains is not news.
    sc_core::sc_report_handler::set_actions("/OSCI/SystemC", sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
    if (warnings_are_errors)
        sc_core::sc_report_handler::set_actions(sc_core::SC_WARNING, sc_core::SC_DISPLAY | sc_core::SC_THROW);
    // Errors throw (caught by the CLI) instead of aborting the process.
    sc_core::sc_report_handler::set_actions(sc_core::SC_ERROR, sc_core::SC_DISPLAY | sc_core::SC_THROW);
    sc_core::sc_report_handler::set_actions(sc_core::SC_FATAL, sc_core::SC_DISPLAY | sc_core::SC_THROW);
    // Model errors (errors.h) are collected and listed at the end of the run, not thrown mid-way.
    for (const char* type : {msg::kSim, msg::kDmaAddress, msg::kPeRange, msg::kHostRuntime})
        sc_core::sc_report_handler::set_actions(type, sc_core::SC_ERROR, sc_core::SC_LOG | sc_core::SC_CACHE_REPORT);
}

} // namespace nctlm


namespace nctlm {
namespace {
std::vector<std::string>& error_list() {
    static std::vector<std::string> errors;
    return errors;
}
} // namespace

void sim_error(const std::string& message, const char* msg_type) {
    error_list().push_back(message);
    SC_REPORT_ERROR(msg_type, message.c_str());
    // A second sc_stop() is a SystemC warning (an error here): the first already stops the kernel.
    if (error_list().size() == 1)
        sc_core::sc_stop();
}

const std::vector<std::string>& sim_errors() { return error_list(); }

sc_core::sc_time time_overflow(double t_ns, const char* what) {
    std::string msg = fmt::format("simulated time overflow: a {} of {:.6g} ns at t = {:.3f} ns is beyond the "
                                  "kernel's range (2^63 fs = {:.0f} s); check the latencies, bandwidths and sizes",
                                  what, t_ns, now_ns(), kMaxSimFs / 1e15);
    if (!sc_core::sc_is_running())
        throw SimulationError(msg);
    // One message per run: every process that overflows afterwards says the same thing.
    static bool reported = false;
    if (!reported)
        sim_error(msg);
    reported = true;
    return sc_core::SC_ZERO_TIME;
}

} // namespace nctlm
