// The GQA roofline (models/analytic/roofline.h): plan, block costs and ceilings from config.
#include "models/analytic/roofline.h"

#include <gtest/gtest.h>

using namespace nctlm;
using namespace nctlm::analytic;

namespace {
GqaShape g4() {
    GqaShape s;
    s.query_heads = 64;
    s.kv_heads = 8;
    s.head_dim = 128;
    s.context = 131072;
    s.block_tokens = 2048;
    return s;
}
HbmConfig hbm(uint32_t stacks, double pc_gbps) {
    HbmConfig h;
    h.stacks = stacks;
    h.pseudo_channels = 16;
    h.pc_bandwidth = Bandwidth{pc_gbps * 1e9};
    h.stack_capacity = 16ull << 30;
    return h;
}
DmaConfig dma(double engine_gbps) {
    DmaConfig d;
    d.engines = 16;
    d.engine_bandwidth = Bandwidth{engine_gbps * 1e9};
    return d;
}
NocConfig noc(double ring_gbps) {
    NocConfig n;
    n.link_bandwidth = Bandwidth{1024e9};
    n.ring_bandwidth = Bandwidth{ring_gbps * 1e9};
    return n;
}
PeConfig pe() {
    PeConfig p;
    p.tensor_clock = Frequency{2.8e9};
    p.vector_clock = Frequency{1.12e9};
    p.moving_max = 512;
    p.sbuf_partitions = 128;
    p.matmul_stationary_floor = 64;
    p.matmul_issue_cycles = 64;
    p.fp32_passes = 4;
    p.vector_min_cycles = 64;
    p.vector_access_cycles = 60;
    p.scalar_clock = Frequency{1.12e9};
    p.scalar_lanes = 128;
    p.scalar_min_cycles = 64;
    p.scalar_access_cycles = 60;
    return p;
}
} // namespace

TEST(GqaRoofline, BytesAreKvPlusQAndO) {
    GqaShape s = g4();
    EXPECT_DOUBLE_EQ(s.kv_bytes(), 2.0 * 8 * 131072 * 128 * 2);  // 512 MiB
    EXPECT_DOUBLE_EQ(s.tile_bytes(), 32768);                      // one tile of one head = 32 KiB
    auto r = gqa_roofline(s, 2, dma(27.2), noc(512), hbm(2, 25.6), pe(), false);
    EXPECT_DOUBLE_EQ(r.bytes, s.kv_bytes() + 2 * 64 * 128 * 2);
    EXPECT_NEAR(r.hbm_peak_ns, r.bytes / 819.2e9 * 1e9, 1e-6);
}

TEST(GqaRoofline, PlanShardsHeadsOrSplitsThem) {
    GqaShape s = g4();
    auto p = gqa_plan(s, 2);
    EXPECT_EQ(p.heads_per_tile, 4u);
    EXPECT_EQ(p.tiles_per_head, 1u);
    s.kv_heads = 4;
    s.query_heads = 32;
    p = gqa_plan(s, 8);
    EXPECT_EQ(p.heads_per_tile, 1u);
    EXPECT_EQ(p.tiles_per_head, 2u);
    EXPECT_EQ(p.tokens_per_slice, 65536u);
    s.kv_heads = 3;
    s.query_heads = 24;
    EXPECT_THROW(gqa_plan(s, 2), std::invalid_argument);
}

// Local placement on 2 tiles / 2 stacks: each stack serves one tile, HBM is the ceiling.
TEST(GqaRoofline, LocalDecodeIsHbmBound) {
    auto r = gqa_roofline(g4(), 2, dma(27.2), noc(512), hbm(2, 25.6), pe(), false);
    EXPECT_EQ(r.bound.resource.rfind("hbm stack", 0), 0u) << r.bound.resource;
    EXPECT_NEAR(r.bound.ns, r.hbm_peak_ns, r.hbm_peak_ns * 1e-9);
}

// Interleaved: half of every tile's bytes cross the ring; a slow ring becomes the ceiling.
TEST(GqaRoofline, InterleavedMakesTheRingACeiling) {
    auto fast = gqa_roofline(g4(), 2, dma(27.2), noc(4096), hbm(2, 25.6), pe(), true);
    auto slow = gqa_roofline(g4(), 2, dma(27.2), noc(100), hbm(2, 25.6), pe(), true);
    EXPECT_EQ(fast.bound.resource.rfind("hbm stack", 0), 0u) << fast.bound.resource;
    EXPECT_EQ(slow.bound.resource.rfind("noc ring", 0), 0u) << slow.bound.resource;
    EXPECT_NEAR(slow.bound.ns, slow.bytes / 2 / 2 / 100e9 * 1e9, 1.0);  // a quarter of the bytes per ring link
}

// Packing chunks on partitions: a larger group leaves fewer chunks, so more vector time per token;
// a head's first block initializes its state (no running-max update, no correction).
TEST(GqaRoofline, BlockCostFollowsTheEngineRules) {
    PeConfig p = pe();
    GqaBlockShape s4 = gqa_block_shape(128, 4, 2048, 128), s8 = gqa_block_shape(128, 8, 2048, 128);
    auto g4b = gqa_block_cost(p, 4, 128, s4, 128, false);
    auto g8b = gqa_block_cost(p, 8, 128, s8, 128, false);
    EXPECT_EQ(g4b.chunks, 16u);  // 16 tiles, at most 128 / 4 chunks
    EXPECT_EQ(g4b.rows, 64u);
    EXPECT_EQ(g8b.rows, 128u);
    // Q.K^T: 16 chunks x one matmul of 128 moving columns = 16 x max(64, 128) cycles at 2.8 GHz.
    EXPECT_NEAR(g8b.qk_ns, 16 * 128 / 2.8, 1e-9);
    // P^T: one transpose of 128 columns; P.V: 16 matmuls of 128 moving columns.
    EXPECT_NEAR(g8b.pv_ns, 17 * 128 / 2.8, 1e-9);
    // softmax: row max (128 + 60) and 2 x (64 + 60) vector cycles, exp (128 + 60) and the
    // correction (64 + 60) scalar cycles, both engines at 1.12 GHz.
    EXPECT_NEAR(g8b.softmax_ns, (2 * 188 + 3 * 124) / 1.12, 1e-9);  // the row sum rides on the exp
    // Scalar: exp, correction, and P^T to SBUF (128 partitions x 128 rows).
    EXPECT_NEAR(g8b.scalar_ns, (188 + 124 + 188) / 1.12, 1e-9);
    auto first = gqa_block_cost(p, 8, 128, s8, 128, true);
    EXPECT_NEAR(first.scalar_ns, (188 + 188) / 1.12, 1e-9);
    EXPECT_NEAR(first.vector_ns, (188 + 188) / 1.12, 1e-9);  // row max; O = P.V (128 + 60)
    EXPECT_EQ(first.vector_ops, 2u);
    EXPECT_EQ(g8b.vector_ops, 5u);
    auto big = gqa_block_cost(p, 64, 128, gqa_block_shape(128, 64, 2048, 128), 128, false);  // 2 chunks of 1024
    EXPECT_EQ(big.chunks, 2u);
    EXPECT_GT(big.softmax_ns, g8b.softmax_ns);
    // The merge: three fp32 selection matmuls at a quarter of the bf16 rate: 16 moving columns (4 x
    // 16 cycles, the 64-cycle issue gap), 128 stationary columns (4 x 64), 129 moving (4 x 129).
    auto comb = gqa_combine_cost(p, 8, 128, 16, 128, 1);
    EXPECT_NEAR(comb.tensor_ns, (64 + 4 * 64 + 4 * 129) / 2.8, 1e-9);
    EXPECT_EQ(comb.matmuls, 3u);
}
