// GQA decode runs on the PE's engines: busy times follow the instruction counts x the engines' cost
// rules, and the engine clock moves only a compute-bound case.
#include "models/pe/engine_timing.h"
#include "tests/support.h"

#include <gtest/gtest.h>

using namespace nctlm;

namespace {

const char* kG1 = "configs/workloads/gqa_g1_llama31_8b_8k.yaml";

nlohmann::json run(const std::string& platform, const std::vector<std::string>& sets, const char* workload = kG1) {
    std::string cmd = "run -q -p " + test::platform(platform) + " -t gqa -w " + test::source_path(workload);
    for (auto& s : sets)
        cmd += " --set '" + s + "'";
    auto r = test::run_cli(cmd + " -o /dev/stdout");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out)["results"];
}

} // namespace

// With SBUF/PSUM ports that never bind (no latency, fast partitions), every engine's busy time is
// exactly its instructions x the cost rules of engine_timing.h, with counts from the flash-decoding
// layout: trn1, G1 (32/8 heads: G = 4), 2 tiles x 4 heads, 4 blocks of 2048 tokens per head;
// 16 tiles of 128 tokens per block -> 16 chunks, 64 rows, 128 tokens per chunk.
TEST(GqaEngines, BusyTimesAreInstructionCountsTimesCostRules) {
    auto r = run("trn1", {"pe.tensor_clock=2 GHz", "pe.vector_clock=1 GHz", "pe.scalar_clock=0.5 GHz",
                          "pe.matmul_overhead_cycles=28", "pe.psum_latency=0 ns", "pe.sbuf_latency=0 ns",
                          "pe.psum_partition_bandwidth=10 TB/s", "pe.sbuf_partition_bandwidth=10 TB/s"});
    const uint32_t heads = 4, blocks = 4, chunks = 16, rows = 64, len = 128, d = 128, g = 4;
    TensorTiming tt{64, 64, 4, 28};
    VectorTiming vt{64, 60};
    ScalarTiming st{128, 64, 60};
    // Tensor per block: chunks Q.K^T (moving len), len/128 transposes, chunks P.V (moving d);
    // per head: two selection matmuls (moving d and 1).
    double per_block = chunks * matmul_cycles(rows, len, Dtype::Bf16, tt) + matmul_cycles(rows, 128, Dtype::Bf16, tt) +
                       chunks * matmul_cycles(rows, d, Dtype::Bf16, tt);
    double per_head = matmul_cycles(rows, d, Dtype::Bf16, tt) + matmul_cycles(rows, 1, Dtype::Bf16, tt);
    double tensor_ns = heads * (blocks * per_block + per_head) / 2.0;  // 2 GHz
    // Vector per block: row max (len), m and l updates (1 x 2 inputs), O *= corr (d), O += P.V (d x 2);
    // per head: rescale (1), normalise (2 x d x 2 inputs).
    double vb = vector_op_cycles(len, vt) + 2 * vector_op_cycles(1, vt, 2) + vector_op_cycles(d, vt) +
                vector_op_cycles(d, vt, 2);
    double vh = vector_op_cycles(1, vt) + 2 * vector_op_cycles(d, vt, 2);
    double vector_ns = heads * (blocks * vb + vh) / 1.0;
    // Scalar per block: exp over len with the row sum, the correction exp; per head: 1/l.
    double sb = scalar_op_cycles(len, rows, st) + scalar_op_cycles(1, rows, st);
    double scalar_ns = heads * (blocks * sb + scalar_op_cycles(1, g, st)) / 0.5;

    EXPECT_EQ(r["engine_instructions"]["tensor"].get<double>(), 2 * heads * (blocks * (2 * chunks + 1) + 2));
    EXPECT_EQ(r["engine_instructions"]["vector"].get<double>(), 2 * heads * (blocks * 5 + 3));
    EXPECT_EQ(r["engine_instructions"]["scalar"].get<double>(), 2 * heads * (blocks * 2 + 1));
    EXPECT_NEAR(r["engine_busy_ns"]["tensor"].get<double>(), tensor_ns, 1e-6 * tensor_ns);
    EXPECT_NEAR(r["engine_busy_ns"]["vector"].get<double>(), vector_ns, 1e-6 * vector_ns);
    EXPECT_NEAR(r["engine_busy_ns"]["scalar"].get<double>(), scalar_ns, 1e-6 * scalar_ns);
}

// trn1 G2: at 5.6 GHz and at the platform's 2.8 GHz the tensor engine has slack and HBM binds, so
// halving the clock barely moves the step; at 1.4 GHz the tensor engine binds and halving it again
// nearly doubles the step.
TEST(GqaEngines, TensorClockMovesOnlyTheComputeBoundCase) {
    const char* g2 = "configs/workloads/gqa_g2_llama31_8b_32k.yaml";
    auto at = [&](const char* clock) { return run("trn1", {std::string("pe.tensor_clock=") + clock}, g2); };
    auto fast = at("5.6 GHz"), base = at("2.8 GHz"), slow = at("1.4 GHz"), slower = at("0.7 GHz");
    EXPECT_EQ(fast["bound"], "hbm");
    EXPECT_EQ(base["bound"], "hbm");
    EXPECT_EQ(slow["bound"], "engine");
    EXPECT_EQ(slower["bound"], "engine");
    double hbm_case = base["sim_time_ns"].get<double>() / fast["sim_time_ns"].get<double>();
    double compute_case = slower["sim_time_ns"].get<double>() / slow["sim_time_ns"].get<double>();
    EXPECT_LT(hbm_case, 1.03);
    EXPECT_GT(compute_case, 1.8);
    EXPECT_LE(compute_case, 2.0 + 1e-9);
}

// A head count that does not divide, or a block that does not fit SBUF/PSUM, is bad input (exit 2)
// pointing at the workload key, with what would fit.
TEST(GqaEngines, BadShapesExitTwoWithLocation) {
    auto cli = [](const std::string& sets) {
        return test::run_cli("run -q -p " + test::platform("trn2") + " -t gqa -w " + test::source_path(kG1) + " " +
                             sets);
    };
    auto heads = cli("--set workload.kv_heads=3 --set workload.query_heads=12");
    EXPECT_EQ(heads.exit_code, 2);
    EXPECT_NE(heads.err.find("kv_heads"), std::string::npos) << heads.err;
    EXPECT_NE(heads.err.find("divide"), std::string::npos) << heads.err;
    auto sbuf = cli("--set workload.buffers=64");
    EXPECT_EQ(sbuf.exit_code, 2);
    EXPECT_NE(sbuf.err.find("block_tokens"), std::string::npos) << sbuf.err;
    EXPECT_NE(sbuf.err.find("at most"), std::string::npos) << sbuf.err;
    auto psum = cli("--set workload.query_heads=1024 --set workload.buffers=1");  // G = 128: one chunk of 8192 tokens
    EXPECT_EQ(psum.exit_code, 2);
    EXPECT_NE(psum.err.find("PSUM"), std::string::npos) << psum.err;
}
