// A whole GEMM split over NeuronCores by output rows (workload.cores): cores sharing an HBM stack
// slow each other down when HBM binds; bad core counts and shapes are bad input.
#include "tests/support.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

using namespace nctlm;

namespace {

const char* kBf16 = "configs/workloads/gemm_4096x4096x4096_bf16.yaml";

test::CliResult cli(const std::string& platform, const std::string& sets, const char* workload = kBf16) {
    return test::run_cli("run -q -p " + test::platform(platform) + " -t gemm -w " + test::source_path(workload) +
                         " " + sets + " -o /dev/stdout");
}

nlohmann::json results(const std::string& platform, const std::string& sets, const char* workload = kBf16) {
    auto r = cli(platform, sets, workload);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out)["results"];
}

} // namespace

// trn2 has two cores per stack. A low-intensity GEMM (128-row tiles: every B block serves 128 rows)
// with the stack rate halved so that HBM, not the cores' DMA engines, binds: two cores on one
// stack (tiles 0, 1) each get about half of what they get on two stacks (tiles 0, 2).
TEST(GemmMulticore, SharedStackIsSlowerPerCoreWhenHbmBinds) {
    std::string sets = "--set workload.cores=2 --set workload.m=256 --set workload.k=1024 --set workload.n=16384 "
                       "--set 'hbm.pc_bandwidth=11 GB/s'";
    auto shared = results("trn2", sets + " --set testbench.core_stride=1");
    auto apart = results("trn2", sets + " --set testbench.core_stride=2");
    EXPECT_EQ(shared["per_core"][1]["tile"], 1);
    EXPECT_EQ(apart["per_core"][1]["tile"], 2);
    double s = shared["per_core_efficiency"].get<double>(), a = apart["per_core_efficiency"].get<double>();
    EXPECT_LT(s, 0.8 * a) << "shared " << s << " apart " << a;
    // The blocking search's estimate gives each of two cores on one stack half of its rate.
    EXPECT_GT(shared["analytic"]["sim_time_ns"].get<double>(), 1.5 * apart["analytic"]["sim_time_ns"].get<double>());
}

// All cores: rows split evenly, the achieved rate is flops / wall and below the platform peak.
TEST(GemmMulticore, AllCoresSplitTheRows) {
    auto r = results("trn1", "");
    EXPECT_EQ(r["cores"], 2);
    EXPECT_EQ(r["partition"]["rows_per_core"], 2048);
    EXPECT_DOUBLE_EQ(r["flops"].get<double>(), 2.0 * 4096.0 * 4096.0 * 4096.0);
    EXPECT_NEAR(r["tflops"].get<double>(), r["flops"].get<double>() / r["sim_time_ns"].get<double>() / 1e3, 1e-9);
    EXPECT_GT(r["chip_efficiency"].get<double>(), 0.3);
    EXPECT_LT(r["chip_efficiency"].get<double>(), 1.0);
    // One core does half the work: nearly twice as long.
    auto one = results("trn1", "--set workload.cores=1");
    EXPECT_GT(one["sim_time_ns"].get<double>(), 1.8 * r["sim_time_ns"].get<double>());
}

TEST(GemmMulticore, CoreCountAboveThePlatformExitsTwo) {
    auto r = cli("trn1", "--set workload.cores=3");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("workload.cores=3"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("has 2 NeuronCores"), std::string::npos) << r.err;
}

// K blocks accumulate in SBUF, so a long contraction fits; ragged shapes take what is left in the
// last block of each dimension (and the last core the rest of the rows); a matmul tile wider than
// the array is bad input.
TEST(GemmMulticore, LongKAndRaggedShapesRunAndTooWideATileExitsTwo) {
    auto longk = results("trn1", "--set workload.cores=1 --set workload.m=256 --set workload.k=65536 --set workload.n=512");
    EXPECT_LT(longk["blocking"]["bk"].get<int>(), 65536);
    EXPECT_DOUBLE_EQ(longk["flops"].get<double>(), 2.0 * 256 * 65536 * 512);
    EXPECT_EQ(longk["analytic"]["bound"], "dma");  // 256 rows reuse each B byte little
    EXPECT_EQ(longk["bound"], "dma issue");
    auto ragged = results("trn1", "--set workload.m=1000 --set workload.k=1000 --set workload.n=1000");
    EXPECT_EQ(ragged["partition"]["rows_per_core"], 512);  // whole 128-row tiles, the last core 488
    EXPECT_DOUBLE_EQ(ragged["flops"].get<double>(), 2.0 * 1000 * 1000 * 1000);
    auto wide = cli("trn1", "--set workload.tile_n=1024");
    EXPECT_EQ(wide.exit_code, 2);
    EXPECT_NE(wide.err.find("workload.tile_m/tile_k/tile_n"), std::string::npos) << wide.err;
    EXPECT_NE(wide.err.find("pe.moving_max"), std::string::npos) << wide.err;
}

// Headline figures (docs/models/pe.md, "Whole-GEMM blocking"): the blocking chosen and what it
// reaches, against goldens (tests/platform/golden/gemm/).
namespace {
const std::vector<std::string> kGemmKeys = {"sim_time_ns", "per_core_efficiency", "blocking", "busiest_resource"};
RunOutcome whole(const std::string& platform, std::vector<std::string> sets) {
    return test::run_testbench(platform, "gemm", sets, kBf16);
}
} // namespace

TEST(GemmWhole, Trn1OneCore4096x8192x8192) {
    test::check_golden("gemm/trn1_1core_4096x8192x8192",
                       whole("trn1", {"workload.cores=1", "workload.k=8192", "workload.n=8192"}), kGemmKeys);
}
TEST(GemmWhole, Trn2OneCore2048) {
    test::check_golden("gemm/trn2_1core_2048",
                       whole("trn2", {"workload.cores=1", "workload.m=2048", "workload.k=2048", "workload.n=2048"}),
                       kGemmKeys);
}
TEST(GemmWhole, Trn2OneCore4096) {
    test::check_golden("gemm/trn2_1core_4096", whole("trn2", {"workload.cores=1"}), kGemmKeys);
}
TEST(GemmWhole, Trn1AllCores4096) { test::check_golden("gemm/trn1_all_4096", whole("trn1", {}), kGemmKeys); }
TEST(GemmWhole, Trn2FourCoresOnePerStack4096) {
    test::check_golden("gemm/trn2_4cores_4096", whole("trn2", {"workload.cores=4", "testbench.core_stride=2"}),
                       kGemmKeys);
}
TEST(GemmWhole, Trn2AllCores4096) { test::check_golden("gemm/trn2_all_4096", whole("trn2", {}), kGemmKeys); }

// The search's estimate of the blocking it picks is within 10 % of the simulation on one core
// when the tensor engine binds (random shapes, ragged ones included, on trn1 and trn2).
TEST(GemmWhole, EstimateTracksTheSimulationWhenTheTensorEngineBinds) {
    uint64_t state = 0x9e3779b97f4a7c15ull;
    auto next = [&](uint64_t lo, uint64_t hi) {
        state ^= state << 13, state ^= state >> 7, state ^= state << 17;
        return lo + state % (hi - lo);
    };
    int compute_bound = 0;
    for (int i = 0; i < 6; ++i) {
        const char* platform = i % 2 ? "trn2" : "trn1";
        uint64_t m = next(512, 2048), k = next(1024, 4096), n = next(1024, 3072);
        auto r = results(platform, fmt::format("--set workload.cores=1 --set workload.m={} --set workload.k={} "
                                               "--set workload.n={}",
                                               m, k, n));
        if (r["analytic"]["bound"] != "tensor")
            continue;
        ++compute_bound;
        EXPECT_NEAR(r["sim_over_analytic"].get<double>(), 1.0, 0.10) << platform << " " << m << "x" << k << "x" << n;
    }
    EXPECT_GE(compute_bound, 4);
}
