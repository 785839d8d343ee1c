// SystemC glue shared by every module: time conversion, kernel set-up, the payload pool.
#pragma once

#include "models/common/units.h"

#include <cmath>
#include <systemc>
#include <tlm>
#include <vector>

namespace nctlm {

// Sets a 1 fs time resolution (so 64 B at 1 TB/s = 62.5 ps is exact), silences SystemC's own
// info reports and makes SC_ERROR/SC_FATAL throw. Warnings (the user's too) stay warnings unless
// warnings_are_errors: the CLI and the tests ask for that, a user's sc_main decides for itself.
// Call once per process before any module is built; later calls do nothing.
void init_kernel(bool warnings_are_errors = false);

// The kernel counts uint64 femtoseconds; sc_time(double) past 2^63 fs (about 9223 s) clamps
// silently (an undefined float-to-int cast). A time beyond that is a simulation error naming the
// figure, never a clamp: while the kernel runs it is recorded (sim_error, exit 3) and zero is
// returned so the stopping kernel can unwind; before it runs, SimulationError is thrown.
constexpr double kMaxSimFs = 9223372036854775808.0;  // 2^63
sc_core::sc_time time_overflow(double ns, const char* what);
// The kernel's tick in fs, cached once the kernel runs (the resolution is fixed by then): these
// conversions run several times per transaction.
inline double running_tick_fs = 0;
// Femtoseconds per kernel tick: 1 once init_kernel() ran, 1000 in tests on SystemC's default grid.
inline double tick_fs() {
    if (running_tick_fs > 0)
        return running_tick_fs;
    double tick = std::round(sc_core::sc_get_time_resolution().to_seconds() * 1e15);
    if (sc_core::sc_is_running())
        running_tick_fs = tick;
    return tick;
}
// The current time without a library call (sc_time_stamp() is out of line; it runs several times
// per transaction).
inline const sc_core::sc_time& sim_time() { return sc_core::sc_get_curr_simcontext()->time_stamp(); }
// sc_time(t_ns, SC_NS) of SystemC 2.3.4 step for step (round half up on the tick grid), without
// its look-ups of the simulation context; tests/unit holds the two equal. Needs the kernel running.
inline sc_dt::uint64 grid_ticks(double t_ns) {
    volatile double ticks = t_ns * (1e6 / running_tick_fs) + 0.5;
    return sc_dt::uint64(static_cast<sc_dt::int64>(ticks));
}
inline sc_core::sc_time checked_time(double t_ns, double base_fs, const char* what) {
    double fs = t_ns * 1e6;
    if (!(fs >= 0 && fs + base_fs < kMaxSimFs))  // also catches NaN
        return time_overflow(t_ns, what);
    if (running_tick_fs <= 0 || t_ns == 0)
        return sc_core::sc_time(t_ns, sc_core::SC_NS);
    return sc_core::sc_time::from_value(grid_ticks(t_ns));
}
inline sc_core::sc_time to_sc(Duration d) {
    return checked_time(d.ns, double(sim_time().value()) * tick_fs(), "delay");
}
// Exact on the 1 fs grid: fs count / 1e6 is one correctly rounded division, no float noise
// (to_seconds() * 1e9 turned 150 ns into 150.00000000000003).
inline double ns(const sc_core::sc_time& t) { return double(t.value()) * tick_fs() / 1e6; }
inline double now_ns() { return ns(sim_time()); }
// Absolute time t_ns on the kernel's grid (1 fs), and the delay from now until then (never
// negative). Compare and wait on the same grid, or a sub-fs remainder becomes a delta loop.
inline sc_core::sc_time at(double t_ns) { return checked_time(t_ns, 0, "time"); }
inline sc_core::sc_time until(double t_ns) {
    sc_core::sc_time t = at(t_ns), now = sim_time();
    return t > now ? t - now : sc_core::SC_ZERO_TIME;
}
// at(t_ns) as a count of kernel ticks, the same rounding without building an sc_time (a library
// call) once the kernel runs.
inline sc_dt::uint64 at_ticks(double t_ns) {
    if (running_tick_fs <= 0 || t_ns == 0 || !(t_ns * 1e6 >= 0 && t_ns * 1e6 < kMaxSimFs))
        return at(t_ns).value();
    return grid_ticks(t_ns);
}

// A pool of generic payloads with a fixed extension each: no allocation per transaction once warm.
template <class Extension> class PayloadPool : public tlm::tlm_mm_interface {
public:
    ~PayloadPool() override {
        for (auto* p : all_)
            delete p;  // the payload deletes its extensions
    }
    tlm::tlm_generic_payload* acquire() {
        tlm::tlm_generic_payload* p;
        if (free_.empty()) {
            p = new tlm::tlm_generic_payload(this);
            p->set_extension(new Extension());
            all_.push_back(p);
        } else {
            p = free_.back();
            free_.pop_back();
        }
        p->acquire();
        ++in_use_;
        return p;
    }
    void free(tlm::tlm_generic_payload* p) override {
        p->set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
        p->set_data_ptr(nullptr);
        free_.push_back(p);
        --in_use_;
    }
    size_t in_use() const { return in_use_; }

private:
    std::vector<tlm::tlm_generic_payload*> all_, free_;
    size_t in_use_ = 0;
};

template <class Extension> Extension& ext(tlm::tlm_generic_payload& p) {
    return *p.get_extension<Extension>();
}

} // namespace nctlm
