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
// exactly its instructions x the cost rules of engine_timing.h, with counts from the GQA decode
// kernel's flash-decoding layout (testbenches/gqa/gqa_kernel.h): trn1, G1 (32/8 heads: G = 4),
// 2 tiles x 4 heads, 4 blocks of 2048 tokens per head; 16 tiles of 128 tokens per block -> 16
// chunks, 64 rows, 128 tokens per chunk; Q of a tile's 4 heads: 16 rows.
TEST(GqaEngines, BusyTimesAreInstructionCountsTimesCostRules) {
    auto r = run("trn1", {"pe.tensor_clock=2 GHz", "pe.vector_clock=1 GHz", "pe.scalar_clock=0.5 GHz",
                          "pe.matmul_overhead_cycles=28", "pe.psum_latency=0 ns", "pe.sbuf_latency=0 ns",
                          "pe.psum_partition_bandwidth=10 TB/s", "pe.sbuf_partition_bandwidth=10 TB/s"});
    const uint32_t heads = 4, blocks = 4, chunks = 16, rows = 64, len = 128, d = 128, g = 4, q = 16, tiles = 2;
    TensorTiming tt{64, 64, 4, 28};
    VectorTiming vt{64, 60};
    ScalarTiming st{128, 64, 60};
    const Dtype bf16 = Dtype::Bf16, fp32 = Dtype::Fp32;
    // Tensor: Q^T (one transpose of 16 rows); per block chunks Q.K^T (G stationary columns, len
    // moving), one P^T (rows x 128 tokens), chunks P.V (G columns, d moving); per head the merge's
    // fp32 selection matmuls (gather the chunk maxima, broadcast the max, sum O and l).
    double per_block = chunks * matmul_cycles(g, len, bf16, tt) + matmul_cycles(rows, 128, bf16, tt) +
                       chunks * matmul_cycles(g, d, bf16, tt);
    double per_head = matmul_cycles(g, chunks, fp32, tt) + matmul_cycles(rows, 1, fp32, tt) +
                      matmul_cycles(g, d + 1, fp32, tt);
    double tensor_ns = (matmul_cycles(q, d, bf16, tt) + heads * (blocks * per_block + per_head)) / 2.0;  // 2 GHz
    // Vector: Q scaled; three merge constants (iota + compare); per head: the first block's row
    // max and O = P.V, the others' row max, running max, l update, O x corr, O + P.V (2 inputs);
    // the merge's chunk maxima, their min, weighting (d + 1), O / l.
    auto v = [&](uint32_t n, uint32_t inputs = 1) { return vector_op_cycles(n, vt, inputs); };
    double setup = v(q) + 2 * (v(chunks) + v(g) + v(rows));
    double first = v(len) + v(d), later = v(len) + 2 * v(1) + v(d) + v(d, 2);
    double merge = 2 * v(chunks) + v(d + 1) + v(d);
    double vector_ns = (setup + heads * (first + (blocks - 1) * later + merge)) / 1.0;
    // Scalar: per block P^T to SBUF (rows per partition, 128 partitions) and the exp over len on
    // the rows; the correction after the first block; per head the chunk weights and 1/l.
    auto a = [&](uint32_t n, uint32_t parts) { return scalar_op_cycles(n, parts, st); };
    double sb = a(rows, 128) + a(len, rows);
    double scalar_ns = heads * (blocks * sb + (blocks - 1) * a(1, rows) + a(1, rows) + a(1, g)) / 0.5;

    EXPECT_EQ(r["engine_instructions"]["tensor"].get<double>(),
              tiles * (1 + heads * (blocks * (2 * chunks + 1) + 3)));
    EXPECT_EQ(r["engine_instructions"]["vector"].get<double>(), tiles * (7 + heads * (2 + (blocks - 1) * 5 + 4)));
    EXPECT_EQ(r["engine_instructions"]["scalar"].get<double>(), tiles * heads * (2 * blocks + (blocks - 1) + 2));
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
