// The scalar engine's cost rule: pure logic.
#include "models/common/config.h"
#include "models/pe/engine_timing.h"
#include "models/pe/pe_config.h"
#include "tests/support.h"

#include <gtest/gtest.h>

using namespace nctlm;

namespace {
PeConfig trn1_pe() { return ConfigTree::from_file(test::platform("trn1")).load<PeConfig>("pe"); }

} // namespace

TEST(ScalarTiming, LanesPassesAndFloor) {
    ScalarTiming st{128, 64, 60};
    EXPECT_DOUBLE_EQ(scalar_op_cycles(100, 128, st), 100 + 60);
    EXPECT_DOUBLE_EQ(scalar_op_cycles(10, 128, st), 64 + 60);       // the 64-cycle floor
    EXPECT_DOUBLE_EQ(scalar_op_cycles(100, 200, st), 2 * 100 + 60);  // 200 partitions: two passes
    EXPECT_DOUBLE_EQ(scalar_op_cycles(100, 64, st, 2), 200 + 60);    // two inputs per element
    PeConfig pe = trn1_pe();
    EXPECT_NEAR(pe.scalar_op_time(128, 128).ns, (128 + 60) / 1.4, 1e-9);  // ScalarE at 1.4 GHz on trn1
}
