// The scalar engine's cost rule and the multi-core GEMM partition: pure logic.
#include "models/common/config.h"
#include "models/pe/engine_timing.h"
#include "models/pe/gemm_partition.h"
#include "models/pe/pe_config.h"
#include "tests/support.h"

#include <gtest/gtest.h>
#include <map>

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

TEST(GemmPartition, RowsOverCoresWithTheLargestFittingRowBlock) {
    PeConfig pe = trn1_pe();
    GemmWorkload w;
    w.m = w.k = w.n = 4096, w.dtype = Dtype::Bf16, w.tile_m = 128, w.tile_k = 128, w.tile_n = 512, w.buffers = 2;
    GemmPartition p;
    ASSERT_EQ(plan_gemm(w, "all", 2, pe, p), "");
    EXPECT_EQ(p.cores, 2u);
    EXPECT_EQ(p.rows_per_core, 2048u);
    EXPECT_EQ(p.tile.m, 512u);
    EXPECT_EQ(p.tile.k, 4096u);
    EXPECT_EQ(p.tile.n, 512u);
    EXPECT_FALSE(p.tile.weights_resident);
    EXPECT_EQ(p.tile.tiles, 4u * 8u);
    EXPECT_DOUBLE_EQ(p.flops(), 2.0 * 4096.0 * 4096.0 * 4096.0);
    ASSERT_EQ(plan_gemm(w, "1", 2, pe, p), "");
    EXPECT_EQ(p.tile.tiles, 8u * 8u);
    EXPECT_NE(plan_gemm(w, "3", 2, pe, p).find("has 2 NeuronCores"), std::string::npos);
    EXPECT_NE(plan_gemm(w, "two", 2, pe, p).find("1..2 or all"), std::string::npos);
    w.m = 4000;
    EXPECT_NE(plan_gemm(w, "all", 2, pe, p).find("multiple of 256"), std::string::npos);
}
