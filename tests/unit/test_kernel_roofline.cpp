// Closed-form rooflines of the kernel library (models/analytic/kernel_roofline.h), without a
// simulation: instruction counts against the kernels' loop structure, each term against the PE's
// cost rules and rates, the bound as the largest ceiling, bad arguments refused. (Their agreement
// with the simulation: tests/platform/test_kernel_library.cpp.)
#include "models/analytic/kernel_roofline.h"
#include "models/common/config.h"
#include "models/dma/dma_cost.h"
#include "tests/support.h"
#include "tests/xorshift.h"

#include <gtest/gtest.h>

using namespace nctlm;
using namespace nctlm::analytic;

namespace {

struct Platform {
    PeConfig pe;
    DmaConfig dma;
    HbmConfig hbm;
};

Platform load(const std::string& name) {
    ConfigTree t = ConfigTree::from_file(test::platform(name));
    return {t.load<PeConfig>("pe"), t.load<DmaConfig>("dma"), t.load<HbmConfig>("hbm")};
}

KernelRoofline roof(const Platform& p, const std::string& kernel, const std::map<std::string, int64_t>& args) {
    return kernel_roofline(kernel, args, p.pe, p.dma, p.hbm);
}

double ceiling(const KernelRoofline& r, const std::string& name) {
    for (auto& c : r.ceilings)
        if (c.resource == name)
            return c.ns;
    ADD_FAILURE() << "no ceiling " << name;
    return 0;
}

} // namespace

TEST(KernelRoofline, GemmCountsEveryMatmulAndBlockLoad) {
    for (const char* name : {"trn1", "trn2"}) {
        Platform p = load(name);
        std::map<std::string, int64_t> args = {{"M", 1024}, {"K", 2048}, {"N", 4096}, {"BM", 1024},
                                               {"BN", 1024}, {"BK", 1024}, {"ABUFS", 2}, {"PSUM_BUFS", 8}};
        KernelRoofline r = roof(p, "gemm", args);
        double matmuls = (1024 / 128) * (4096 / 512) * (2048 / 128);
        EXPECT_EQ(r.work.matmuls, matmuls);
        EXPECT_EQ(r.work.flops, 2.0 * 1024 * 2048 * 4096);
        // A [K, M] read once per column block, B [K, N] once per row block, C written once.
        EXPECT_EQ(r.work.bytes_in, 2.0 * (2048.0 * 1024 * 4096 / 1024 + 2048.0 * 4096 * 1024 / 1024));
        EXPECT_EQ(r.work.bytes_out, 2.0 * 1024 * 4096);
        // Each matmul: the cost rule (128 stationary, 512 moving columns), or its 2 KiB per partition
        // into PSUM, whichever is longer.
        double psum = p.pe.psum_latency.ns + p.pe.psum_partition_bandwidth.transfer(2048).ns;
        double each = std::max(p.pe.matmul_time(128, 512, Dtype::Bf16).ns, psum);
        EXPECT_DOUBLE_EQ(ceiling(r, "tensor"), matmuls * each);
        EXPECT_EQ(r.bound.resource, "tensor");
        EXPECT_DOUBLE_EQ(ceiling(r, "dma issue"),
                         (r.work.bytes_in + r.work.bytes_out) / DmaCostRules::from(p.dma).peak_rate());
        EXPECT_DOUBLE_EQ(ceiling(r, "hbm stack"), (r.work.bytes_in + r.work.bytes_out) * 1e9 /
                                                       p.hbm.stack_bandwidth().bytes_per_s);
    }
}

TEST(KernelRoofline, ElementwiseKernelsCountRaggedTilesAndMoveTheirTensorsOnce) {
    Platform p = load("trn1");
    KernelRoofline r = roof(p, "add", {{"ROWS", 300}, {"COLS", 1000}, {"TC", 512}});
    // 3 row tiles (128, 128, 44) x 2 column tiles (512, 488).
    EXPECT_EQ(r.work.vector_ops, 6);
    EXPECT_EQ(r.work.dma_instructions, 18);
    EXPECT_EQ(r.work.bytes_in, 2.0 * 2 * 300 * 1000);
    EXPECT_EQ(r.work.bytes_out, 2.0 * 300 * 1000);
    KernelWork w(p.pe);
    double expected = 3 * (w.vector_ns({512, 2, Dtype::Bf16, 0, 2048, 1024, false, 128}) +
                           w.vector_ns({488, 2, Dtype::Bf16, 0, 1952, 976, false, 128}));
    EXPECT_DOUBLE_EQ(ceiling(r, "vector"), expected);
    EXPECT_EQ(ceiling(r, "scalar"), 0);
    KernelRoofline s = roof(p, "silu_mul", {{"ROWS", 300}, {"COLS", 1000}, {"TC", 512}});
    EXPECT_EQ(s.work.scalar_ops, 6);
    EXPECT_DOUBLE_EQ(ceiling(s, "vector"), expected);
    // Large tensors: the DMA engines' full-row rate binds on trn1 (272 GB/s under the stack's 409.6 GB/s).
    KernelRoofline big = roof(p, "add", {{"ROWS", 4096}, {"COLS", 4096}, {"TC", 2048}});
    EXPECT_EQ(big.bound.resource, "dma issue");
    EXPECT_DOUBLE_EQ(big.bound.ns, 3.0 * 4096 * 4096 * 2 / DmaCostRules::from(p.dma).peak_rate());
}

TEST(KernelRoofline, RowKernelsHaveTheirInstructionsPerRowTile) {
    Platform p = load("trn2");
    // Per row tile: vector and scalar instructions, DMAs; once: the weights' loads and eps's memset.
    for (auto [kernel, vector, scalar, dmas] : {std::tuple{"softmax", 1, 3, 2}, std::tuple{"rmsnorm", 1, 3, 2},
                                                std::tuple{"layernorm", 2, 6, 2}}) {
        KernelRoofline r = roof(p, kernel, {{"ROWS", 1000}, {"COLS", 2048}});
        double tiles = 8;  // ceil(1000 / 128)
        double weights = std::string(kernel) == "layernorm" ? 2 : std::string(kernel) == "rmsnorm" ? 1 : 0;
        EXPECT_EQ(r.work.vector_ops, vector * tiles + (weights > 0)) << kernel;
        EXPECT_EQ(r.work.scalar_ops, scalar * tiles) << kernel;
        EXPECT_EQ(r.work.dma_instructions, dmas * tiles + weights) << kernel;
        EXPECT_EQ(r.work.bytes_in, 2.0 * 1000 * 2048 + weights * 2.0 * 128 * 2048) << kernel;
        EXPECT_EQ(r.work.bytes_out, 2.0 * 1000 * 2048) << kernel;
        EXPECT_EQ(r.work.flops, 0) << kernel;
    }
    // rmsnorm's SBUF reads per row tile and partition: x by the sum of squares (2 COLS) and by the
    // scaling (2 COLS + the scale), x_n and the weight by the product (4 COLS), the statistics (8).
    KernelRoofline r = roof(p, "rmsnorm", {{"ROWS", 1024}, {"COLS", 2048}});
    EXPECT_DOUBLE_EQ(r.work.sbuf_read, 8 * (8.0 * 2048 + 12));
    EXPECT_DOUBLE_EQ(ceiling(r, "sbuf read ports"), p.pe.sbuf_partition_bandwidth.transfer(8 * (8.0 * 2048 + 12)).ns);
}

TEST(KernelRoofline, FlashAttentionVisitsTheCausalBlocksOfEveryQueryTile) {
    Platform p = load("trn1");
    test::XorShift64 rng{5};
    for (int trial = 0; trial < 20; ++trial) {
        int64_t kvh = int64_t(1 + rng() % 4), h = kvh * int64_t(2 * (1 + rng() % 4)), s = int64_t(512 * (1 + rng() % 6));
        int64_t d = int64_t(16 * (1 + rng() % 8));
        KernelRoofline r = roof(p, "flash_attention", {{"H", h}, {"KVH", kvh}, {"S", s}, {"D", d}});
        double blocks = 0;  // key blocks of 512 up to and including the diagonal, per 128-query tile
        for (int64_t i = 0; i < s / 128; ++i)
            blocks += double(i / 4 + 1);
        blocks *= double(h);
        EXPECT_EQ(r.work.matmuls, 6 * blocks);  // QK^T, the mask, four PV
        EXPECT_EQ(r.work.transposes, 4 * blocks);
        EXPECT_EQ(r.work.flops, blocks * 2.0 * 128 * 512 * (double(d) + 128 + double(d)));
        EXPECT_EQ(r.work.bytes_out, 2.0 * double(h * s * d));
        EXPECT_EQ(r.work.bytes_in, 2.0 * double(h * s * d) + blocks * 2.0 * 512 * double(d) * 2);
        EXPECT_GE(r.bound.ns, ceiling(r, "tensor"));
    }
}

TEST(KernelRoofline, GqaDecodeReadsTheCacheOnceWithOneQkAndFourPvMatmulsPerPairAndBlock) {
    Platform p = load("trn2");
    test::XorShift64 rng{7};
    for (int trial = 0; trial < 20; ++trial) {
        int64_t g = int64_t(1) << (1 + rng() % 4), per_pass = 128 / g, pairs = per_pass * int64_t(1 + rng() % 3);
        int64_t c = int64_t(512 * (1 + rng() % 6)), d = int64_t(16 * (1 + rng() % 8));
        KernelRoofline r = roof(p, "gqa_decode", {{"PAIRS", pairs}, {"G", g}, {"C", c}, {"D", d}});
        double blocks = double(pairs / per_pass) * double(c / 512);
        EXPECT_EQ(r.work.matmuls, blocks * double(per_pass) * 5);
        EXPECT_EQ(r.work.transposes, 4 * blocks);
        EXPECT_EQ(r.work.flops, 2.0 * 2.0 * double(pairs * g * d * c));
        EXPECT_EQ(r.work.bytes_in, 2.0 * double(pairs) * double(d * g + 2 * c * d));
        EXPECT_EQ(r.work.bytes_out, 2.0 * double(pairs * g * d));
        EXPECT_EQ(r.work.dma_instructions, double(pairs / per_pass) * double(2 * per_pass) + blocks * double(per_pass) * 5);
        EXPECT_GE(r.bound.ns, ceiling(r, "tensor"));
    }
}

TEST(KernelRoofline, TheBoundIsTheLargestCeilingAndEachScalesWithItsRate) {
    Platform p = load("trn1");
    std::map<std::string, int64_t> args = {{"ROWS", 2048}, {"COLS", 4096}};
    KernelRoofline base = roof(p, "softmax", args);
    for (auto& c : base.ceilings)
        EXPECT_LE(c.ns, base.bound.ns) << c.resource;
    // Twice the DMA engines halve that ceiling; the others do not move.
    Platform fast = p;
    fast.dma.engines *= 2;
    KernelRoofline r = roof(fast, "softmax", args);
    EXPECT_DOUBLE_EQ(ceiling(r, "dma issue"), ceiling(base, "dma issue") / 2);
    EXPECT_DOUBLE_EQ(ceiling(r, "vector"), ceiling(base, "vector"));
    // Twice the rows: every ceiling doubles (whole row tiles).
    args["ROWS"] = 4096;
    KernelRoofline twice = roof(p, "softmax", args);
    for (size_t i = 0; i < base.ceilings.size(); ++i)
        EXPECT_DOUBLE_EQ(twice.ceilings[i].ns, 2 * base.ceilings[i].ns) << base.ceilings[i].resource;
}

TEST(KernelRoofline, BadKernelsAndArgumentsAreRefused) {
    Platform p = load("trn1");
    EXPECT_THROW(roof(p, "conv", {}), std::invalid_argument);
    EXPECT_THROW(roof(p, "softmax", {{"ROWS", 128}}), std::invalid_argument);            // COLS missing
    EXPECT_THROW(roof(p, "softmax", {{"ROWS", 0}, {"COLS", 64}}), std::invalid_argument);  // not a size
    EXPECT_THROW(roof(p, "gemm", {{"M", 1000}, {"K", 1024}, {"N", 1024}, {"BM", 512}, {"BN", 512}, {"BK", 512}}),
                 std::invalid_argument);
    EXPECT_THROW(roof(p, "flash_attention", {{"H", 4}, {"KVH", 2}, {"S", 640}, {"D", 64}}), std::invalid_argument);
    EXPECT_THROW(roof(p, "flash_attention", {{"H", 4}, {"KVH", 2}, {"S", 512}, {"D", 256}}), std::invalid_argument);
    EXPECT_THROW(roof(p, "gqa_decode", {{"PAIRS", 48}, {"G", 4}, {"C", 512}, {"D", 64}}), std::invalid_argument);
    EXPECT_THROW(roof(p, "gqa_decode", {{"PAIRS", 64}, {"G", 3}, {"C", 512}, {"D", 64}}), std::invalid_argument);
    EXPECT_THROW(roof(p, "gqa_decode", {{"PAIRS", 64}, {"G", 4}, {"C", 1000}, {"D", 64}}), std::invalid_argument);
    EXPECT_EQ(library_kernels().size(), 8u);
}
