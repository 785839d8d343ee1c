// The GQA decode kernel program (testbenches/gqa/gqa_kernel.h) without a simulation: it loads and
// passes the kernel checker, every instance's instructions complete under their semaphores, the
// instruction counts follow the flash-decoding layout, and shapes that do not fit are refused
// naming the workload key.
#include "models/common/config.h"
#include "models/kernel/kernel_lowering.h"
#include "testbenches/gqa/gqa_kernel.h"
#include "tests/support.h"

#include <gtest/gtest.h>
#include <map>
#include <set>

using namespace nctlm;

namespace {

PeConfig trn1_pe() { return ConfigTree::from_file(test::platform("trn1")).load<PeConfig>("pe"); }

// trn1 G1 on one tile: Llama-3.1-8B (G = 4, head_dim 128), 4 KV heads of 8192 tokens, 2048-token blocks.
GqaKernelSpec g1_tile() {
    GqaKernelSpec s;
    s.group = 4, s.head_dim = 128, s.tile_tokens = 128, s.block_tokens = 2048, s.buffers = 4;
    s.heads = 4, s.tokens = 8192, s.tiles = 1;
    s.kv_region = 32 << 20, s.misc_base = 64 << 20, s.misc_region = 1 << 20;
    return s;
}

struct Expanded {
    std::map<Unit, uint64_t> per_unit;
    uint64_t total = 0, completed = 0;
};

// Expands instance `i` and runs its units in order with zero-time instructions, any ready unit
// first (a grid barrier passes at once); counts what completes (all unless the semaphores deadlock).
Expanded dry_run(const GqaKernelSpec& s, const PeConfig& pe, uint32_t instance = 0) {
    auto p = kernel::KernelProgram::from_json(gqa_decode_kernel(s, pe), "gqa");
    kernel::Layout l = kernel::make_layout(p, pe, s.tiles);
    kernel::check_kernel(p, l, instance, pe, {});
    kernel::Lowerer lower(p, l, instance, pe, {});
    std::vector<std::vector<Instruction>> queues(kUnits);
    Expanded r;
    Instruction ins;
    uint64_t index = 0;
    while (lower.next(ins, index)) {
        queues[size_t(ins.unit)].push_back(ins);
        ++r.per_unit[ins.unit];
        ++r.total;
    }
    std::vector<uint64_t> sems(lower.semaphores(), 0);
    std::vector<std::set<uint64_t>> early(sems.size());
    std::vector<size_t> head(kUnits, 0);
    for (bool progress = true; progress;) {
        progress = false;
        for (int u = 0; u < kUnits; ++u)
            while (head[u] < queues[u].size()) {
                const Instruction& in = queues[u][head[u]];
                bool ready = true;
                for (auto& w : in.waits)
                    ready = ready && sems.at(w.sem) >= w.value;
                if (!ready)
                    break;
                if (in.signal >= 0) {
                    uint64_t& v = sems.at(size_t(in.signal));
                    auto& e = early[size_t(in.signal)];
                    if (in.signal_ordinal == 0 || in.signal_ordinal == v + 1)
                        ++v;
                    else
                        e.insert(in.signal_ordinal);
                    while (!e.empty() && *e.begin() == v + 1) {
                        e.erase(e.begin());
                        ++v;
                    }
                }
                ++head[u], ++r.completed, progress = true;
            }
    }
    return r;
}

} // namespace

// Every unit's instructions complete under the semaphores, for one and several heads, one (no
// software pipelining), two and four K/V buffers, groups that pack 16, 8 or 1 chunk(s) per block.
TEST(GqaKernel, CompletesWithoutDeadlock) {
    PeConfig pe = trn1_pe();
    for (uint32_t buffers : {1u, 2u, 4u})
        for (uint32_t heads : {1u, 4u})
            for (uint32_t group : {4u, 16u, 128u}) {
                GqaKernelSpec s = g1_tile();
                s.buffers = buffers, s.heads = heads, s.group = group;
                if (group == 128)
                    s.block_tokens = 512;  // one chunk: 512 tokens of scores per PSUM bank
                Expanded r = dry_run(s, pe);
                EXPECT_EQ(r.completed, r.total) << buffers << " buffers, " << heads << " heads, G " << group;
            }
}

// trn1 G1's tile: 4 heads x 4 blocks of 2048 tokens = 16 K/V tiles -> 16 chunks of 128 tokens, 64 rows.
TEST(GqaKernel, InstructionCountsFollowTheLayout) {
    const uint64_t heads = 4, blocks = 4, chunks = 16;
    Expanded r = dry_run(g1_tile(), trn1_pe());
    ASSERT_EQ(r.completed, r.total);
    // Tensor: Q^T (one transpose); per block chunks Q.K^T, one P^T, chunks P.V; per head the
    // merge's three selection matmuls.
    EXPECT_EQ(r.per_unit[Unit::Tensor], 1 + heads * (blocks * (2 * chunks + 1) + 3));
    // Vector: Q scaled, the merge's three constants (iota + compare); per head: the first block's
    // row max and O = P.V, the others' row max, running max, l, O x corr, O + P.V; the merge's
    // four (chunk maxima, their min, weighting, O / l).
    EXPECT_EQ(r.per_unit[Unit::Vector], 1 + 6 + heads * (2 + (blocks - 1) * 5 + 4));
    // Scalar: per block P^T to SBUF and exp, the correction after the first; per head the chunk
    // weights and 1/l.
    EXPECT_EQ(r.per_unit[Unit::Scalar], heads * (2 * blocks + (blocks - 1) + 2));
    EXPECT_EQ(r.per_unit[Unit::Fetch], heads * blocks * 2);
    EXPECT_EQ(r.per_unit[Unit::DmaIn], 1 + heads * blocks * 2);
    EXPECT_EQ(r.per_unit[Unit::DmaOut], heads);
}

// A slice that ends in a shorter block: the full blocks' chunk length in fewer chunks; a tail
// that is not whole chunks is refused with what would fit.
TEST(GqaKernel, TailBlocksKeepTheChunkLength) {
    PeConfig pe = trn1_pe();
    GqaKernelSpec s = g1_tile();
    s.tokens = 2048 * 2 + 640;  // a tail of 5 tiles: 5 chunks of 128 tokens
    Expanded r = dry_run(s, pe);
    EXPECT_EQ(r.completed, r.total);
    EXPECT_EQ(r.per_unit[Unit::DmaIn], 1 + s.heads * 3 * 2);
    EXPECT_EQ(r.per_unit[Unit::Tensor], 1 + s.heads * ((2 * 16 + 1) * 2 + (2 * 5 + 1) + 3));
    s.group = 16;  // 8 chunks of 2 tiles: a 5-tile tail is not whole chunks
    EXPECT_NE(gqa_kernel_check(s, pe).find("multiple of workload.block_tokens or of 256"), std::string::npos)
        << gqa_kernel_check(s, pe);
    analytic::GqaBlockShape full = analytic::gqa_block_shape(128, 16, 2048, 128);
    EXPECT_EQ(full.chunks, 8u);
    EXPECT_EQ(full.sub, 2u);
    EXPECT_EQ(analytic::gqa_tail_shape(full, 6, 16).chunks, 3u);
    EXPECT_EQ(analytic::gqa_tail_shape(full, 5, 16).chunks, 0u);
    EXPECT_EQ(analytic::gqa_block_shape(128, 12, 2048, 128).chunks, 8u);  // the largest divisor of 16 <= 10
}

// Split KV over tiles: partners write their partial, the owner reads theirs after a grid barrier
// and merges; every instance reaches the barrier.
TEST(GqaKernel, SplitKvOwnerMergesItsPartners) {
    PeConfig pe = trn1_pe();
    GqaKernelSpec s = g1_tile();
    s.heads = 1, s.tiles = 4, s.tiles_per_head = 2;
    Expanded owner = dry_run(s, pe, 2), partner = dry_run(s, pe, 3);
    EXPECT_EQ(owner.completed, owner.total);
    EXPECT_EQ(partner.completed, partner.total);
    EXPECT_EQ(owner.per_unit[Unit::Sync], 1u);
    EXPECT_EQ(partner.per_unit[Unit::Sync], 1u);
    EXPECT_EQ(owner.per_unit[Unit::DmaIn], partner.per_unit[Unit::DmaIn] + 1);  // the partner's partial
    EXPECT_EQ(owner.per_unit[Unit::DmaOut], 1u);                                // O
    EXPECT_EQ(partner.per_unit[Unit::DmaOut], 1u);                              // its partial
}

// Shapes that do not fit name the workload key and what would fit.
TEST(GqaKernel, ShapesThatDoNotFitAreRefused) {
    PeConfig pe = trn1_pe();
    GqaKernelSpec s = g1_tile();
    s.buffers = 64;
    std::string sbuf = gqa_kernel_check(s, pe);
    EXPECT_NE(sbuf.find("workload.block_tokens"), std::string::npos) << sbuf;
    EXPECT_NE(sbuf.find("at most 23 buffers"), std::string::npos) << sbuf;
    s.buffers = 23;  // the largest that fits: the kernel's own layout agrees
    EXPECT_EQ(gqa_kernel_check(s, pe), "");
    EXPECT_NO_THROW(kernel::make_layout(kernel::KernelProgram::from_json(gqa_decode_kernel(s, pe), "gqa"), pe, 1));
    s.buffers = 24;
    EXPECT_THROW(gqa_decode_kernel(s, pe), std::invalid_argument);
    s = g1_tile();
    s.group = 128;  // one chunk of 2048 tokens: 8 KiB of scores per partition, a bank holds 2 KiB
    std::string psum = gqa_kernel_check(s, pe);
    EXPECT_NE(psum.find("PSUM bank"), std::string::npos) << psum;
    s = g1_tile();
    s.head_dim = 200;
    EXPECT_NE(gqa_kernel_check(s, pe).find("head_dim"), std::string::npos);
}
