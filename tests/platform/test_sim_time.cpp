// nctlm::checked_time builds sc_time from the tick count itself once the kernel runs (speed); it
// must give exactly what sc_time(t, SC_NS) gives, on the 1 fs grid the CLI uses.
#include "models/common/sim.h"

#include <cmath>
#include <gtest/gtest.h>
#include <random>
#include <systemc>

namespace {

struct Compare : sc_core::sc_module {
    SC_HAS_PROCESS(Compare);
    explicit Compare(sc_core::sc_module_name n) : sc_module(n) { SC_THREAD(run); }
    long mismatches = 0, checked = 0;
    bool cached = false;
    void run() {
        sc_core::wait(1, sc_core::SC_NS);
        (void)nctlm::tick_fs();
        cached = nctlm::running_tick_fs > 0;
        std::mt19937_64 rng(7);
        std::uniform_real_distribution<double> mantissa(0, 1e9);
        for (int i = 0; i < 2000000; ++i) {
            double v = mantissa(rng) / std::pow(10.0, double(rng() % 13));
            if (i % 3 == 0)  // timing-like values: whole ps plus multiples of a 0.625 ns tCK
                v = std::round(v * 1000) / 1000 + 0.625 * double(i % 7);
            ++checked;
            mismatches += nctlm::checked_time(v, 0, "test") != sc_core::sc_time(v, sc_core::SC_NS);
        }
    }
};

TEST(SimTime, CheckedTimeEqualsTheKernelsConversionWhileRunning) {
    nctlm::init_kernel(true);
    Compare c("compare");
    sc_core::sc_start();
    EXPECT_TRUE(c.cached) << "the tick is cached once the kernel runs";
    EXPECT_EQ(c.checked, 2000000);
    EXPECT_EQ(c.mismatches, 0);
}

} // namespace
