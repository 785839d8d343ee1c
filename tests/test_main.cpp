// GoogleTest entry for every test binary. SystemC elaborates once per process, so ctest runs
// each TEST in its own process (gtest_discover_tests); SystemC warnings fail the test.
#include "models/common/sim.h"

#include <gtest/gtest.h>

int sc_main(int argc, char** argv) {
    nctlm::init_kernel(/*warnings_are_errors=*/true);
    testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}
