// The host copy schedule, the analytic kernel cost and interval unions: pure logic, no kernel.
#include "models/host/kernel_cost.h"
#include "models/host/transfer_schedule.h"

#include <gtest/gtest.h>

using namespace nctlm;

namespace {
// Round numbers: 1 GB/s link = 1 ns per byte, 2 GB/s memcpy, 1 KiB chunks, 100 ns latency.
TransferParams params() { return {Duration(100), 1024, Bandwidth{2e9}}; }
} // namespace

TEST(HostSchedule, PinnedToDeviceIsLatencyPlusBytesOverBandwidth) {
    BandwidthPipe link(Bandwidth{1e9});
    auto t = schedule_h2d(50, 4096, /*host_pinned=*/true, params(), link);
    EXPECT_DOUBLE_EQ(t.host_free_ns, 150); // the host only pays the set-up
    EXPECT_DOUBLE_EQ(t.link_start_ns, 150);
    EXPECT_DOUBLE_EQ(t.done_ns, 150 + 4096);
    EXPECT_EQ(t.chunks, 4u);
    EXPECT_DOUBLE_EQ(t.memcpy_ns, 0);
}

TEST(HostSchedule, PageableToDevicePipelinesStagingWithTheDma) {
    BandwidthPipe link(Bandwidth{1e9});
    auto t = schedule_h2d(0, 4096, /*host_pinned=*/false, params(), link);
    // memcpy 512 ns per chunk, DMA 1024 ns per chunk: the link is the bottleneck and only the
    // first chunk's staging shows.
    EXPECT_DOUBLE_EQ(t.host_free_ns, 100 + 4 * 512);
    EXPECT_DOUBLE_EQ(t.done_ns, 100 + 512 + 4096);
    EXPECT_DOUBLE_EQ(t.memcpy_ns, 2048);
    // The host is free before the data has landed: that tail is what an async runtime overlaps.
    EXPECT_LT(t.host_free_ns, t.done_ns);
}

TEST(HostSchedule, SlowMemcpyBoundsPageableCopies) {
    BandwidthPipe link(Bandwidth{1e9});
    TransferParams p = params();
    p.memcpy = Bandwidth{0.5e9}; // 2048 ns per chunk, slower than the link
    auto t = schedule_h2d(0, 4096, false, p, link);
    EXPECT_DOUBLE_EQ(t.done_ns, 100 + 4 * 2048 + 1024);
}

TEST(HostSchedule, TransfersInOneDirectionShareTheLink) {
    BandwidthPipe link(Bandwidth{1e9});
    auto a = schedule_h2d(0, 2048, true, params(), link);
    auto b = schedule_h2d(0, 2048, true, params(), link);
    EXPECT_DOUBLE_EQ(b.link_start_ns, a.link_end_ns);
    EXPECT_DOUBLE_EQ(b.done_ns, 100 + 4096);
}

TEST(HostSchedule, PageableToHostWaitsForTheLastChunkCopyOut) {
    BandwidthPipe link(Bandwidth{1e9});
    auto t = schedule_d2h(0, 4096, false, params(), link);
    EXPECT_DOUBLE_EQ(t.link_end_ns, 100 + 4096);
    EXPECT_DOUBLE_EQ(t.done_ns, 100 + 4096 + 512);
    EXPECT_DOUBLE_EQ(t.host_free_ns, t.done_ns);
    BandwidthPipe link2(Bandwidth{1e9});
    auto pinned = schedule_d2h(0, 4096, true, params(), link2);
    EXPECT_DOUBLE_EQ(pinned.done_ns, 100 + 4096);
}

TEST(HostSchedule, PartialLastChunk) {
    BandwidthPipe link(Bandwidth{1e9});
    auto t = schedule_d2h(0, 1500, true, params(), link);
    EXPECT_EQ(t.chunks, 2u);
    EXPECT_DOUBLE_EQ(t.done_ns, 1600);
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
