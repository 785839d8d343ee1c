// A whole GEMM split over NeuronCores by output rows (workload.cores): cores sharing an HBM stack
// slow each other down when HBM binds; bad core counts and shapes are bad input.
#include "tests/support.h"

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
    // The contention-free analytic model cannot tell the two apart.
    EXPECT_DOUBLE_EQ(shared["analytic"]["sim_time_ns"].get<double>(), apart["analytic"]["sim_time_ns"].get<double>());
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

TEST(GemmMulticore, ShapeThatDoesNotFitSbufExitsTwo) {
    auto r = cli("trn1", "--set workload.k=65536");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("SBUF"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("reduce workload.k"), std::string::npos) << r.err;
    auto rows = cli("trn1", "--set workload.m=4000");
    EXPECT_EQ(rows.exit_code, 2);
    EXPECT_NE(rows.err.find("multiple of 256"), std::string::npos) << rows.err;
}
