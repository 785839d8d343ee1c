// Engine cost rules, the PE config section, the GEMM program generator: pure logic, no kernel.
#include "models/common/config.h"
#include "models/pe/engine_timing.h"
#include "models/kernel/kernel_lowering.h"
#include "models/pe/gemm_workload.h"
#include "testbenches/gemm/gemm_kernel.h"
#include "models/pe/pe_config.h"
#include "tests/support.h"

#include <algorithm>
#include <gtest/gtest.h>
#include <map>

using namespace nctlm;

namespace {
PeConfig trn1_pe() {
    return ConfigTree::from_file(test::platform("trn1")).load<PeConfig>("pe");
}

GemmWorkload reference(uint32_t tiles = 48) {
    GemmWorkload w;
    w.m = 32, w.k = 3072, w.n = 32, w.tiles = tiles, w.tile_m = 128, w.tile_k = 128, w.tile_n = 512,
    w.buffers = 4;
    return w;
}
} // namespace

TEST(TensorTiming, MatmulCostIsMaxOfFlooredStationaryAndMoving) {
    TensorTiming t; // documented defaults: floor 64, gap 64, fp32 4 passes, no overhead
    EXPECT_EQ(matmul_cost_cycles(128, 512, Dtype::Bf16, t), 512);
    EXPECT_EQ(matmul_cost_cycles(128, 32, Dtype::Bf16, t), 64); // min(64, 128) = 64 > 32
    EXPECT_EQ(matmul_cost_cycles(32, 16, Dtype::Bf16, t), 32);  // min(64, 32) = 32 > 16
    EXPECT_EQ(matmul_cost_cycles(128, 100, Dtype::Bf16, t), 100);
}

TEST(TensorTiming, IssueGapFloorsShortMatmulsAndFp32TakesFourPasses) {
    TensorTiming t;
    EXPECT_EQ(matmul_cycles(32, 32, Dtype::Bf16, t), 64); // cost 32 < 64-cycle gap
    EXPECT_EQ(matmul_cycles(128, 512, Dtype::Bf16, t), 512);
    EXPECT_EQ(matmul_cycles(128, 512, Dtype::Fp32, t), 2048);
    EXPECT_EQ(matmul_cycles(32, 32, Dtype::Fp32, t), 128); // 4 x 32 > 64
    t.overhead_cycles = 10;
    EXPECT_EQ(matmul_cycles(32, 32, Dtype::Bf16, t), 74);
    t.min_issue_cycles = 0;
    t.overhead_cycles = 0;
    EXPECT_EQ(matmul_cycles(32, 32, Dtype::Bf16, t), 32);
}

TEST(VectorTiming, MaxOf64AndNPlusAccessOverhead) {
    VectorTiming v;
    EXPECT_EQ(vector_op_cycles(32, v), 64 + 60);
    EXPECT_EQ(vector_op_cycles(512, v), 512 + 60);
    EXPECT_EQ(vector_op_cycles(512, v, 2), 1024 + 60); // two-input ops ~2N
}

TEST(TensorTiming, Fp8RunsAtItsSpeedupOverBf16) {
    TensorTiming t;  // NeuronCore-v2: cFP8 at the BF16 rate
    EXPECT_EQ(matmul_cycles(128, 512, Dtype::Fp8, t), matmul_cycles(128, 512, Dtype::Bf16, t));
    t.fp8_speedup = 2;  // NeuronCore-v3 double FP8: 256 contraction rows in the time of 128
    EXPECT_EQ(matmul_cycles(128, 512, Dtype::Fp8, t), 256);
    EXPECT_EQ(matmul_cycles(128, 32, Dtype::Fp8, t), 64);  // the issue gap still floors it
}

TEST(VectorTiming, PerformanceModeOnlyForHalfWidthOperands) {
    VectorTiming v{64, 60, 4};  // NeuronCore-v3
    VectorOperands sbuf_bf16{Dtype::Bf16, false}, psum_bf16{Dtype::Bf16, true}, sbuf_fp32{Dtype::Fp32, false};
    EXPECT_EQ(vector_op_cycles(1024, v, 1, sbuf_bf16), 256 + 60);    // 4x: tensor_copy/tensor_scalar in SBUF
    EXPECT_EQ(vector_op_cycles(1024, v, 1, psum_bf16), 512 + 60);    // 2x: an operand in PSUM
    EXPECT_EQ(vector_op_cycles(1024, v, 2, sbuf_bf16), 1024 + 60);   // 2x: tensor_tensor over SBUF
    EXPECT_EQ(vector_op_cycles(1024, v, 2, psum_bf16), 2048 + 60);   // no mode
    EXPECT_EQ(vector_op_cycles(1024, v, 1, sbuf_fp32), 1024 + 60);   // fp32: no mode
    EXPECT_EQ(vector_op_cycles(32, v, 1, sbuf_bf16), 64 + 60);       // the floor stays
    v.bf16_speedup = 1;                                              // NeuronCore-v2
    EXPECT_EQ(vector_op_cycles(1024, v, 1, sbuf_bf16), 1024 + 60);
    // Off the shipped values: any speedup divides the work term, never below 1x.
    for (uint32_t s = 1; s <= 16; ++s) {
        v.bf16_speedup = s;
        EXPECT_DOUBLE_EQ(vector_op_cycles(4096, v, 1, sbuf_bf16), 4096.0 / s + 60);
        EXPECT_DOUBLE_EQ(vector_op_cycles(4096, v, 1, psum_bf16), 4096.0 / std::max(1.0, s / 2.0) + 60);
    }
}

TEST(Dtype, NamesAndSizes) {
    EXPECT_EQ(dtype_bytes(Dtype::Bf16), 2u);
    EXPECT_EQ(dtype_bytes(Dtype::Fp32), 4u);
    EXPECT_EQ(parse_dtype("fp8"), Dtype::Fp8);
    EXPECT_THROW(parse_dtype("int4"), UnitError);
}

TEST(PeConfig, Trn1SectionGivesTheReferenceMatmulTime) {
    PeConfig pe = trn1_pe();
    EXPECT_DOUBLE_EQ(pe.tensor_clock.hz, 2.8e9);
    EXPECT_EQ(pe.sbuf_partitions * pe.sbuf_partition_bytes, 24ull << 20);
    EXPECT_EQ(pe.psum_bank_bytes(), 2048u);
    // 24 matmuls of 128x32 by 128x32: each the 64-cycle gap plus the calibrated overhead.
    double expect = 24 * (64.0 + pe.matmul_overhead_cycles) / 2.8;
    EXPECT_NEAR(24 * pe.matmul_time(32, 32, Dtype::Bf16).ns, expect, 1e-9);
}

TEST(PeConfig, OverrideAndBadValuesAreReported) {
    ConfigTree t = ConfigTree::from_file(test::platform("trn1"));
    t.set("pe.tensor_clock=1.4 GHz");
    EXPECT_DOUBLE_EQ(t.load<PeConfig>("pe").tensor_clock.hz, 1.4e9);
    t.set("pe.psum_banks=0");
    EXPECT_THROW(t.load<PeConfig>("pe"), ConfigError);
}

// The GEMM tile pipeline as a kernel program, lowered onto the PE: its instruction counts, and the
// slot reuse the buffers give (tile 4's DMA-in waits for tile 0's fetch, no earlier tile waits).
TEST(GemmProgram, ReferenceTileInstructionCountsAndBuffers) {
    PeConfig pe = trn1_pe();
    GemmWorkload w = reference(6);
    EXPECT_EQ(w.matmuls(), 24u);
    EXPECT_EQ(w.in_bytes(), 192u * 1024);
    EXPECT_EQ(w.fetch_bytes(), 384u * 1024);
    kernel::KernelProgram kp = kernel::KernelProgram::from_json(gemm_pipeline_kernel(w, pe.operand_buffers), "gemm");
    kernel::Layout layout = kernel::make_layout(kp, pe, 1);
    kernel::Lowerer lower(kp, layout, 0, pe, {});
    std::map<Op, int> ops;
    Instruction i;
    uint64_t index = 0;
    int reads = 0;
    while (lower.next(i, index)) {
        ++ops[i.op];
        if (i.op != Op::DmaRead)
            continue;
        if (i.tile < 4) {
            EXPECT_TRUE(i.waits.empty()) << "tile " << i.tile;
        } else {  // the fetch that read slot 0 (and the load that filled it, which that fetch waited for)
            auto fetch = std::find_if(i.waits.begin(), i.waits.end(),
                                      [](const SemWait& w) { return w.sem == uint32_t(Unit::Fetch); });
            ASSERT_NE(fetch, i.waits.end());
            EXPECT_EQ(fetch->value, i.tile - 4 + 1);
            EXPECT_LE(i.waits.size(), 2u);
        }
        EXPECT_EQ(i.address, uint64_t(i.tile) * w.a_bytes());  // tensor a at 0: not placed
        EXPECT_EQ(i.bytes, w.a_bytes());
        ++reads;
    }
    EXPECT_EQ(reads, 6);
    EXPECT_EQ(ops[Op::Fetch], 6);
    EXPECT_EQ(ops[Op::Matmul], 6 * 24);
    EXPECT_EQ(ops[Op::VectorOp], 6);
    EXPECT_EQ(ops[Op::DmaWrite], 6);
}

TEST(GemmProgram, ShapesThatDoNotFitAreRejected) {
    PeConfig pe = trn1_pe();
    GemmWorkload w = reference();
    w.tile_k = 256;
    EXPECT_NE(w.check(pe), "");
    w = reference();
    w.n = 4096; // 16 KiB of fp32 accumulators per partition per tile: 8 banks, x 4 buffers
    EXPECT_NE(w.check(pe).find("PSUM"), std::string::npos);
    w = reference();
    w.k = 128 * 1024;
    EXPECT_NE(w.check(pe).find("SBUF"), std::string::npos);
    EXPECT_EQ(reference().check(pe), "");
}
