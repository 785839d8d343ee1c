// The analytic models: the ideal pipeline on hand-worked cases, the memory-path formula against
// the probe's 141 ns, the GEMM stage times' dependence on the shape.
#include "models/analytic/gemm_model.h"
#include "models/analytic/ideal_pipeline.h"
#include "models/analytic/memory_path.h"
#include "platforms/platform_config.h"
#include "tests/support.h"

#include <gtest/gtest.h>

using namespace nctlm;
using namespace nctlm::analytic;

namespace {
PlatformConfig trn1(const std::vector<std::string>& sets = {}) {
    ConfigTree t = ConfigTree::from_file(test::platform("trn1"));
    for (auto& s : sets)
        t.set(s);
    return PlatformConfig::load(t);
}
GemmWorkload shape(uint32_t k, uint32_t tiles) {
    GemmWorkload w;
    w.m = 32, w.k = k, w.n = 32, w.tiles = tiles, w.tile_m = 128, w.tile_k = 128, w.tile_n = 512,
    w.buffers = 4;
    return w;
}
} // namespace

TEST(IdealPipeline, ThreeBalancedStages) {
    Pipeline p;
    p.steps = {{"a", 100, 100, true}, {"b", 100, 100, true}, {"c", 100, 100, true}};
    p.fill_ns = 10;
    p.tail_ns = 5;
    PipelineResult r = evaluate(p, 1);
    EXPECT_DOUBLE_EQ(r.wall_ns, 315);
    EXPECT_NEAR(r.efficiency, 100.0 / 315, 1e-12);
    r = evaluate(p, 10);
    EXPECT_DOUBLE_EQ(r.period_ns, 100);
    EXPECT_DOUBLE_EQ(r.wall_ns, 10 + 300 + 9 * 100 + 5);
    EXPECT_NEAR(r.efficiency, 1000.0 / 1215, 1e-12);
}

TEST(IdealPipeline, LatencyStepsAndBufferRingsLimitThroughput) {
    Pipeline p;
    p.steps = {{"start", 1000, 0, false}, {"load", 100, 100, true}, {"use", 100, 100, true}};
    PipelineResult r = evaluate(p, 2);
    EXPECT_EQ(r.bottleneck, "load"); // a pure latency is not a stage
    EXPECT_DOUBLE_EQ(r.period_ns, 100);
    p.rings = {{"buf", 0, 2, 3}}; // 3 buffers around 1200 ns: one tile per 400 ns at best
    r = evaluate(p, 2);
    EXPECT_DOUBLE_EQ(r.period_ns, 400);
    EXPECT_EQ(r.limiter, "buf");
    p.shared = {{"bus", 500}};
    EXPECT_EQ(evaluate(p, 2).limiter, "bus");
    EXPECT_THROW(evaluate(p, 0), std::invalid_argument);
}

TEST(MemoryPath, ReproducesTheProbeFormula) {
    // Cold start, no refresh: 5 + 15 x 0.0625 + 8 + (0.625 + 14.375 + 14.375) + 80 + 8 + 6.43
    // (docs/calibration.md's derivation of the 141 ns probe, less the bank-group start-up).
    PlatformConfig c = trn1({"hbm.refresh=off"});
    MemoryPath m(c.dma, c.noc, c.hbm);
    double probe = 5 + 15 * 0.0625 + 8 + 29.375 + 80 + 8 + 9 / 1.4;
    EXPECT_NEAR(m.read_ns(32 * 1024), probe, 0.01);
    EXPECT_NEAR(m.read_ns(64 * 1024), probe + 16 * 0.0625 + 80, 0.01);  // 2 bursts per PC
    PlatformConfig slow = trn1({"hbm.refresh=off", "hbm.t_cl=24 ns"});
    EXPECT_NEAR(MemoryPath(slow.dma, slow.noc, slow.hbm).read_ns(32 * 1024), probe + 10, 0.01);
    // With refresh, work busy for 500 ns meets one with probability (500 + 260) / 3900, then waits 130 ns.
    EXPECT_NEAR(MemoryPath(trn1().dma, trn1().noc, trn1().hbm).refresh_delay_ns(500), 760.0 / 3900 * 130, 0.01);
    EXPECT_EQ(m.refresh_delay_ns(500), 0.0);
    PlatformConfig pipe = trn1({"hbm.model=pipe"});  // the wave-1 formula: controller_latency 29 ns
    EXPECT_NEAR(MemoryPath(pipe.dma, pipe.noc, pipe.hbm).read_ns(32 * 1024), probe - 29.375 + 29, 0.01);
}

TEST(GemmModel, ReferenceStagesFollowTheParameters) {
    PlatformConfig c = trn1();
    MemoryPath m(c.dma, c.noc, c.hbm);
    GemmStageTimes t = gemm_stage_times(shape(3072, 48), c.pe, c.dma, m);
    EXPECT_NEAR(t.gemm, 24 * c.pe.matmul_time(32, 32, Dtype::Bf16).ns, 1e-9);
    EXPECT_NEAR(t.fetch, c.pe.sbuf_latency.ns + 3072 / (c.pe.sbuf_partition_bandwidth.bytes_per_s / 1e9),
                1e-6);
    EXPECT_GT(t.dma_in, 192 * 1024 / 272.0); // at least the paced transfer
    EXPECT_DOUBLE_EQ(t.dma_start, 1300);
    // Halving the DMA engines roughly doubles the DMA-in stage and leaves the others alone.
    PlatformConfig half = trn1({"dma.engines=8"});
    GemmStageTimes h = gemm_stage_times(shape(3072, 48), half.pe, half.dma, m);
    EXPECT_GT(h.dma_in, 1.8 * t.dma_in);
    EXPECT_DOUBLE_EQ(h.gemm, t.gemm);
}

TEST(GemmModel, EfficiencyGrowsWithTilesAndStagesWithK) {
    PlatformConfig c = trn1();
    MemoryPath m(c.dma, c.noc, c.hbm);
    double prev = 0;
    for (uint32_t tiles : {1u, 2u, 8u, 48u, 400u}) {
        double e = evaluate(gemm_pipeline(shape(3072, tiles), c.pe, c.dma, m), tiles).efficiency;
        EXPECT_GT(e, prev);
        EXPECT_LT(e, 1.0);
        prev = e;
    }
    GemmStageTimes small = gemm_stage_times(shape(1024, 1), c.pe, c.dma, m),
                   big = gemm_stage_times(shape(4096, 1), c.pe, c.dma, m);
    EXPECT_NEAR(big.gemm / small.gemm, 4.0, 1e-9);
    EXPECT_GT(big.fetch, 3 * small.fetch);
    EXPECT_GT(big.dma_in, 2 * small.dma_in);
}
