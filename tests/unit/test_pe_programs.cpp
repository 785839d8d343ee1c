// The scalar engine's cost rule, the GQA program and the multi-core GEMM partition: pure logic.
#include "models/common/config.h"
#include "models/pe/engine_timing.h"
#include "models/pe/gemm_partition.h"
#include "models/pe/gqa_program.h"
#include "models/pe/pe_config.h"
#include "tests/support.h"

#include <gtest/gtest.h>
#include <map>

using namespace nctlm;

namespace {
PeConfig trn1_pe() { return ConfigTree::from_file(test::platform("trn1")).load<PeConfig>("pe"); }

// Runs a program's units in order with zero-time instructions, any ready unit first; returns how
// many instructions completed (all of them unless the semaphores deadlock).
size_t dry_run(const Program& p) {
    std::vector<std::vector<size_t>> queues(kUnits);
    for (size_t i = 0; i < p.instructions.size(); ++i)
        queues[int(p.instructions[i].unit)].push_back(i);
    std::vector<size_t> head(kUnits, 0);
    std::vector<uint64_t> sems(p.semaphores, 0);
    size_t done = 0;
    for (bool progress = true; progress;) {
        progress = false;
        for (int u = 0; u < kUnits; ++u)
            while (head[u] < queues[u].size()) {
                const Instruction& ins = p.instructions[queues[u][head[u]]];
                bool ready = true;
                for (auto& w : ins.waits)
                    ready = ready && w.sem < sems.size() && sems[w.sem] >= w.value;
                if (!ready)
                    break;
                if (ins.signal >= 0)
                    ++sems.at(size_t(ins.signal));
                ++head[u], ++done, progress = true;
            }
    }
    return done;
}

GqaProgramSpec g1_tile(uint32_t heads, uint32_t blocks_per_head, uint32_t buffers) {
    GqaProgramSpec s;
    s.group = 4, s.head_dim = 128, s.tile_tokens = 128, s.buffers = buffers, s.heads = heads;
    s.kv_descriptor_bytes = 32 * 1024;
    for (uint32_t h = 0; h < heads; ++h) {
        for (uint32_t b = 0; b < blocks_per_head; ++b)
            s.blocks.push_back({h, 2048, 0, 0});
        s.out_address.push_back(0);
    }
    return s;
}
} // namespace

TEST(ScalarTiming, LanesPassesAndFloor) {
    ScalarTiming st{128, 64, 60};
    EXPECT_DOUBLE_EQ(scalar_op_cycles(100, 128, st), 100 + 60);
    EXPECT_DOUBLE_EQ(scalar_op_cycles(10, 128, st), 64 + 60);       // the 64-cycle floor
    EXPECT_DOUBLE_EQ(scalar_op_cycles(100, 200, st), 2 * 100 + 60);  // 200 partitions: two passes
    EXPECT_DOUBLE_EQ(scalar_op_cycles(100, 64, st, 2), 200 + 60);    // two inputs per element
    PeConfig pe = trn1_pe();
    EXPECT_NEAR(pe.scalar_op_time(128, 128).ns, (128 + 60) / 1.4, 1e-9);  // ScalarE at 1.4 GHz on trn1
}

// Every unit's instructions complete in order under the semaphores, for one and several heads and
// buffer counts, and the per-block instruction counts follow the flash-decoding layout.
TEST(GqaProgram, CompletesWithoutDeadlockAndCountsInstructions) {
    PeConfig pe = trn1_pe();
    for (uint32_t buffers : {1u, 2u, 4u})
        for (uint32_t heads : {1u, 4u}) {
            Program p = make_gqa_program(g1_tile(heads, 4, buffers), pe);
            EXPECT_EQ(dry_run(p), p.instructions.size()) << buffers << " buffers, " << heads << " heads";
            std::map<Unit, size_t> n;
            for (auto& i : p.instructions)
                ++n[i.unit];
            // 2048 tokens = 16 K/V tiles -> 16 chunks of 128 tokens, 64 rows.
            EXPECT_EQ(n[Unit::Tensor], heads * (4 * (16 + 1 + 16) + 2));
            EXPECT_EQ(n[Unit::Vector], heads * (4 * 5 + 3));
            EXPECT_EQ(n[Unit::Scalar], heads * (4 * 2 + 1));
            EXPECT_EQ(n[Unit::DmaIn], 1 + heads * 4 * 2);
            EXPECT_EQ(n[Unit::DmaOut], heads);
        }
}

TEST(GqaProgram, ChecksSbufAndPsum) {
    PeConfig pe = trn1_pe();
    auto s = g1_tile(1, 1, 64);
    EXPECT_NE(gqa_check(s, pe).find("at most"), std::string::npos);
    s = g1_tile(1, 1, 2);
    s.group = 128;  // one chunk of 2048 tokens: 8 KiB of scores x 2 buffers per partition > 16 KiB
    EXPECT_NE(gqa_check(s, pe).find("PSUM"), std::string::npos);
    EXPECT_EQ(gqa_check(g1_tile(4, 4, 4), pe), "");
}

TEST(GemmPartition, RowsOverCoresWithTheLargestFittingRowBlock) {
    PeConfig pe = trn1_pe();
    GemmWorkload w;
    w.m = w.k = w.n = 4096, w.dtype = Dtype::Bf16, w.tile_m = 128, w.tile_k = 128, w.tile_n = 512, w.buffers = 2;
    GemmPartition p;
    ASSERT_EQ(plan_gemm(w, "all", 2, pe, p), "");
    EXPECT_EQ(p.cores, 2u);
    EXPECT_EQ(p.rows_per_core, 2048u);
    EXPECT_EQ(p.tile.m, 512u);
    EXPECT_EQ(p.tile.k, 4096u);
    EXPECT_EQ(p.tile.n, 512u);
    EXPECT_FALSE(p.tile.weights_resident);
    EXPECT_EQ(p.tile.tiles, 4u * 8u);
    EXPECT_DOUBLE_EQ(p.flops(), 2.0 * 4096.0 * 4096.0 * 4096.0);
    ASSERT_EQ(plan_gemm(w, "1", 2, pe, p), "");
    EXPECT_EQ(p.tile.tiles, 8u * 8u);
    EXPECT_NE(plan_gemm(w, "3", 2, pe, p).find("has 2 NeuronCores"), std::string::npos);
    EXPECT_NE(plan_gemm(w, "two", 2, pe, p).find("1..2 or all"), std::string::npos);
    w.m = 4000;
    EXPECT_NE(plan_gemm(w, "all", 2, pe, p).find("multiple of 256"), std::string::npos);
}
