// The host copy schedule, the analytic kernel cost and interval unions: pure logic, no kernel.
#include "models/host/kernel_cost.h"
#include "models/host/transfer_schedule.h"

#include <gtest/gtest.h>

using namespace nctlm;

namespace {
// Round numbers: 1 GB/s link = 1 ns per byte, 2 GB/s CPU copy, 1 KiB descriptors, 100 ns latency,
// 10 ns to see a completion, 512 B pages pinned two at a time (one descriptor per batch), free.
TransferParams params() { return {Duration(100), 1024, Duration(10), Bandwidth{2e9}, 512, Duration(0), 2}; }
} // namespace

TEST(HostSchedule, PageableToDeviceCopiesDmasAndWaitsChunkByChunk) {
    BandwidthPipe link(Bandwidth{1e9});
    auto t = schedule_h2d(50, 4096, /*host_pinned=*/false, params(), link);
    // Per 1 KiB chunk: copy in 512 ns, DMA 1024 ns, completion seen 10 ns later; nothing overlaps.
    EXPECT_DOUBLE_EQ(t.done_ns, 150 + 4 * (512 + 1024 + 10));
    EXPECT_DOUBLE_EQ(t.host_free_ns, t.done_ns); // the driver's copy is synchronous
    EXPECT_DOUBLE_EQ(t.link_start_ns, 150 + 512);
    EXPECT_DOUBLE_EQ(t.memcpy_ns, 2048);
    EXPECT_EQ(t.chunks, 4u);
    EXPECT_DOUBLE_EQ(t.pin_ns, 0);
}

TEST(HostSchedule, PageableToHostDmasWaitsThenCopiesOut) {
    BandwidthPipe link(Bandwidth{1e9});
    auto t = schedule_d2h(0, 4096, false, params(), link);
    EXPECT_DOUBLE_EQ(t.link_end_ns, 100 + 3 * (1024 + 10 + 512) + 1024);
    EXPECT_DOUBLE_EQ(t.done_ns, 100 + 4 * (1024 + 10 + 512));
}

TEST(HostSchedule, ZeroCopyPinsTheNextBatchWhileTheDmaRuns) {
    TransferParams p = params();
    p.pin_per_page = Duration(50); // 100 ns per 1 KiB batch: hidden behind the 1024 ns DMA
    BandwidthPipe link(Bandwidth{1e9});
    auto t = schedule_h2d(0, 4096, /*host_pinned=*/true, p, link);
    EXPECT_DOUBLE_EQ(t.done_ns, 100 + 100 + 4096 + 10); // only the first batch's pinning shows
    EXPECT_DOUBLE_EQ(t.pin_ns, 400);
    EXPECT_DOUBLE_EQ(t.memcpy_ns, 0);
    // Pinning slower than the DMA: the pins set the pace and only the last DMA shows.
    p.pin_per_page = Duration(1000);
    BandwidthPipe link2(Bandwidth{1e9});
    auto slow = schedule_d2h(0, 4096, true, p, link2);
    EXPECT_DOUBLE_EQ(slow.done_ns, 100 + 4 * 2000 + 1024 + 10);
}

TEST(HostSchedule, TransfersInOneDirectionShareTheLink) {
    BandwidthPipe link(Bandwidth{1e9});
    auto a = schedule_h2d(0, 2048, true, params(), link);
    auto b = schedule_h2d(0, 2048, true, params(), link);
    EXPECT_DOUBLE_EQ(b.link_start_ns, a.link_end_ns);
    EXPECT_DOUBLE_EQ(b.done_ns, 100 + 4096 + 10);
}

TEST(HostSchedule, PartialLastChunk) {
    BandwidthPipe link(Bandwidth{1e9});
    auto t = schedule_d2h(0, 1500, true, params(), link);
    EXPECT_EQ(t.chunks, 2u);
    EXPECT_DOUBLE_EQ(t.done_ns, 100 + 1500 + 10);
}

TEST(HostCopyRate, CachedBelowTheLlcMixedAbove) {
    Bandwidth llc{20e9}, dram{5e9};
    EXPECT_DOUBLE_EQ(copy_rate(1000, 1000, llc, dram).bytes_per_s, 20e9);
    EXPECT_DOUBLE_EQ(copy_rate(10, 1000, llc, dram).bytes_per_s, 20e9);
    // A quarter of the working set fits: time per byte = 0.25 / llc + 0.75 / dram.
    EXPECT_NEAR(copy_rate(4000, 1000, llc, dram).bytes_per_s, 1 / (0.25 / 20e9 + 0.75 / 5e9), 1);
}

// Random valid configurations: copy time is linear in bytes while the buffers fit, and grows
// faster than linearly (time per byte rises toward 1 / dram) once they spill out of the LLC.
TEST(HostCopyRate, CopyTimeGrowsFasterThanLinearlyPastTheLlc) {
    uint64_t seed = 12345;
    auto next = [&] { return (seed = seed * 6364136223846793005ull + 1442695040888963407ull) >> 11; };
    for (int i = 0; i < 200; ++i) {
        uint64_t llc = 64 * 1024 + next() % (64ull << 20);
        Bandwidth fast{1e9 + double(next() % 50'000) * 1e6}, slow{0.1e9 + double(next() % 1000) * 1e6};
        if (slow.bytes_per_s >= fast.bytes_per_s)
            continue;
        auto per_byte = [&](uint64_t bytes) { return 1 / copy_rate(2 * bytes, llc, fast, slow).bytes_per_s; };
        EXPECT_DOUBLE_EQ(per_byte(llc / 4), per_byte(llc / 2));
        double prev = per_byte(llc / 2);
        for (uint64_t b = llc; b <= 64 * llc; b *= 2) {
            double now = per_byte(b);
            EXPECT_GT(now, prev) << "llc " << llc << " bytes " << b;
            EXPECT_LT(now, 1 / slow.bytes_per_s);
            prev = now;
        }
    }
}

TEST(HostSchedule, UnionLengthCountsOverlapOnce) {
    EXPECT_DOUBLE_EQ(union_length({}), 0);
    EXPECT_DOUBLE_EQ(union_length({{0, 10}, {5, 15}, {20, 30}}), 25);
    EXPECT_DOUBLE_EQ(union_length({{20, 30}, {0, 10}, {2, 3}}), 20);
}

TEST(KernelCost, AnalyticIsLaunchPlusFlopsOverRate) {
    HostConfig cfg;
    cfg.kernel_bf16_tflops = 100;
    cfg.kernel_fp32_ratio = 0.25;
    cfg.kernel_cores = 2;
    cfg.kernel_launch = Duration(1000);
    AnalyticKernelCost k(cfg);
    MatmulShape s{1000, 1000, 1000, DType::Fp32};
    EXPECT_DOUBLE_EQ(k.flops_per_s(DType::Fp32), 50e12);
    EXPECT_NEAR(k.matmul(s).ns, 1000 + 2e9 / 50e12 * 1e9, 1e-6);
    s.dtype = DType::Bf16;
    EXPECT_NEAR(k.matmul(s).ns, 1000 + 2e9 / 200e12 * 1e9, 1e-6);
}
