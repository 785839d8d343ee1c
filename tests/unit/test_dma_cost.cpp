// The DMA engines' cost of a transfer shape (models/dma/dma_cost.h): the public single-engine
// figures on the shipped platforms (the rates themselves are also held by test_public_figures),
// the bandwidth guide's payload tiers, and the closed forms on random valid configurations.
#include "models/dma/dma_config.h"
#include "models/dma/dma_cost.h"
#include "platforms/platform_config.h"
#include "tests/support.h"

#include <gtest/gtest.h>
#include <random>

using namespace nctlm;

namespace {
DmaCostRules rules(const std::string& platform) {
    return DmaCostRules::from(PlatformConfig::load(ConfigTree::from_file(test::platform(platform))).dma);
}

// A contiguous [partitions, row] tensor in HBM moved to SBUF from partition 0.
DmaTransferShape rows(uint32_t partitions, uint64_t row) { return {partitions * row, partitions * row, partitions, 0, false}; }
// The same rows, each its own HBM run (a slice of a wider tensor).
DmaTransferShape slice(uint32_t partitions, uint64_t row) { return {partitions * row, row, partitions, 0, false}; }

// A random valid engine set: rate, overhead, burst, engines, partitions per engine.
DmaCostRules random_rules(std::mt19937& rng) {
    DmaCostRules r;
    r.ns_per_byte = 1.0 / (1 + double(rng() % 100));
    r.packet_overhead_ns = double(rng() % 200);
    r.packet_bytes = uint64_t(64) << (rng() % 7);
    r.engines = 1 + rng() % 32;
    r.partitions_per_engine = 1 + rng() % 16;
    r.transpose_efficiency = 0.05 + 0.95 * double(rng() % 100) / 100;
    return r;
}
} // namespace

// NKI DMA bandwidth guide / DMA overview tables: 17 (trn1) and 23 (trn2) B/ns per engine with
// >= 4 KiB per partition, 272 / 368 GB/s over 16 engines; from the theoretical 27.2 GB/s.
TEST(DmaCost, ReferencePatternReproducesThePublicPerEngineRates) {
    for (auto [platform, rate] : {std::pair{"trn1", 17.0}, std::pair{"trn2", 23.0}}) {
        DmaCostRules r = rules(platform);
        EXPECT_NEAR(r.engine_rate(4096), rate, rate * 1e-3) << platform;
        EXPECT_NEAR(r.engine_rate(64 * 1024), rate, rate * 1e-3) << platform;
        EXPECT_NEAR(r.peak_rate(), 16 * rate, 16 * rate * 1e-3) << platform;
        // The theoretical rate is the limit without the set-up: not reached by any shape.
        EXPECT_LT(r.engine_rate(1 << 20), 27.2) << platform;
    }
}

// NKI DMA overview, Example 1 (Trn2): one engine loads A[4,4096] bf16 (32 KiB) in 1416 ns. The
// overhead comes from the 23 B/ns table, so this is a prediction, not a fit.
TEST(DmaCost, SingleEngineExampleOne) {
    DmaCostRules r = rules("trn2");
    std::vector<DmaEngineLoad> loads = r.engine_loads(rows(4, 8192));
    EXPECT_EQ(loads[0].bytes, 32768u);
    for (size_t e = 1; e < loads.size(); ++e)
        EXPECT_EQ(loads[e].packets, 0u) << "4 partitions use one engine";
    EXPECT_NEAR(r.busiest_engine_ns(rows(4, 8192)), 1416, 1416 * 0.01);
}

// NKI DMA overview, Example 2: A[128,128] bf16 uses all 16 engines, one 2 KiB read each (its
// eight contiguous 256 B rows); the same rows sliced out of a wider tensor pay a packet per row.
TEST(DmaCost, FullPartitionsUseEveryEngine) {
    DmaCostRules r = rules("trn2");
    for (const DmaEngineLoad& l : r.engine_loads(rows(128, 256))) {
        EXPECT_EQ(l.bytes, 2048u);
        EXPECT_EQ(l.packets, 1u);
    }
    for (const DmaEngineLoad& l : r.engine_loads(slice(128, 256)))
        EXPECT_EQ(l.packets, 8u);
    // Fewer partitions, fewer engines (bandwidth guide: 'Use full partitions'): [P, 4 KiB] takes one
    // engine's 8 rows whatever P, so the rate grows with P / 8.
    for (uint32_t p = 8; p <= 128; p *= 2)
        EXPECT_DOUBLE_EQ(r.busiest_engine_ns(rows(p, 4096)), r.busiest_engine_ns(rows(8, 4096))) << p;
}

// The guide's tiers: < 256 B per partition severely overhead-bound (a small fraction of peak),
// >= 2 KiB approaches peak, >= 4 KiB saturates; the rate never falls as rows grow.
TEST(DmaCost, PayloadTiersOfTheBandwidthGuide) {
    for (auto platform : {"trn1", "trn2"}) {
        DmaCostRules r = rules(platform);
        double peak = r.engine_rate(4096);
        EXPECT_LT(r.engine_rate(128), peak / 3) << platform;
        EXPECT_LT(r.engine_rate(1024), 0.95 * peak) << platform;
        EXPECT_GE(r.engine_rate(2048), 0.999 * peak) << platform;
        double last = 0;
        for (uint64_t row = 64; row <= 64 * 1024; row *= 2) {
            EXPECT_GE(r.engine_rate(row), last) << platform << " " << row;
            last = r.engine_rate(row);
        }
    }
}

// Strides: the same bytes in short HBM runs cost a packet per run.
TEST(DmaCost, ShortRunsCostAPacketEach) {
    DmaCostRules r = rules("trn1");
    DmaTransferShape contiguous = rows(128, 4096), strided = contiguous;
    strided.run_bytes = 64;  // e.g. a column block of 32 bf16 per row of a wider matrix
    auto busiest = [&](const DmaTransferShape& s) {
        uint64_t p = 0;
        for (auto& l : r.engine_loads(s))
            p = std::max(p, l.packets);
        return p;
    };
    EXPECT_EQ(busiest(contiguous), 8u * 2);   // 8 rows of 4 KiB: 2 packets each
    EXPECT_EQ(busiest(strided), 8u * 64);     // 8 rows of 64 runs
    EXPECT_GT(r.busiest_engine_ns(strided), 4 * r.busiest_engine_ns(contiguous));
}

// On any valid configuration: full rows of whole bursts run at burst / (overhead + burst / rate);
// every byte goes to some engine; a packet never exceeds a burst; a transpose costs 1/efficiency
// of the same packets' bytes.
TEST(DmaCost, ClosedFormsHoldOnRandomConfigurations) {
    std::mt19937 rng(22);
    for (int i = 0; i < 500; ++i) {
        DmaCostRules r = random_rules(rng);
        uint64_t burst = r.packet_bytes;
        double expected = double(burst) / (r.packet_overhead_ns + double(burst) * r.ns_per_byte);
        EXPECT_NEAR(r.engine_rate(burst * (1 + rng() % 4)), expected, expected * 1e-9);

        DmaTransferShape s;
        s.partitions = 1 + rng() % 128;
        s.first_partition = rng() % 128;
        s.bytes = s.partitions * (1 + rng() % 10000);
        s.run_bytes = 1 + rng() % s.bytes;
        s.transpose = rng() % 4 == 0;
        uint64_t bytes = 0, packets = 0;
        for (auto& l : r.engine_loads(s)) {
            bytes += l.bytes;
            packets += l.packets;
            EXPECT_LE(l.bytes, l.packets * burst);
        }
        EXPECT_EQ(bytes, s.bytes);
        EXPECT_GE(packets, (s.bytes + burst - 1) / burst);
        if (s.transpose) {
            DmaEngineLoad l = r.engine_loads(s)[0];
            EXPECT_NEAR(r.engine_ns(l, true) - r.engine_ns(l, false),
                        double(l.bytes) * r.ns_per_byte * (1 / r.transpose_efficiency - 1), 1e-6);
        }
    }
}
