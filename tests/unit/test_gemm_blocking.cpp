// The whole-GEMM blocking search (models/analytic/gemm_blocking.h) and the blocked GEMM kernel
// (testbenches/gemm/gemm_kernel.h): candidates fit SBUF and PSUM as the kernel's layout counts
// them, the estimate follows its rules, the search ranks by it; the kernel expands and counts as
// its blocking says, ragged shapes included; the shipped configs/kernels/gemm_blocked.json is the builder's.
#include "models/analytic/gemm_blocking.h"
#include "models/common/config.h"
#include "models/dma/dma_cost.h"
#include "models/kernel/kernel_lowering.h"
#include "testbenches/gemm/gemm_kernel.h"
#include "tests/support.h"
#include "tests/xorshift.h"

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <gtest/gtest.h>

using namespace nctlm;
using namespace nctlm::analytic;
using json = nlohmann::json;

namespace {

PeConfig pe_of(const char* platform) { return ConfigTree::from_file(test::platform(platform)).load<PeConfig>("pe"); }

GemmShape shape(uint64_t m, uint64_t k, uint64_t n, Dtype d = Dtype::Bf16) {
    GemmShape s;
    s.m = m, s.k = k, s.n = n, s.dtype = d;
    return s;
}

GemmRates rates(double gb_per_s = 272, double start_ns = 1300) { return {gb_per_s, start_ns}; }

// The kernel for one core's `rows` of an m x k x n GEMM, laid out on `pe`.
struct Built {
    kernel::KernelProgram program;
    kernel::Layout layout;
};
Built build(const GemmShape& s, const GemmBlocking& b, const PeConfig& pe, uint32_t cores = 1, uint64_t m_total = 0) {
    json j = gemm_blocked_kernel(s.dtype);
    set_gemm_blocked_args(j, m_total ? m_total : s.m, s.m, cores, s.k, s.n, s, b);
    Built out{kernel::KernelProgram::from_json(j, "gemm"), {}};
    out.layout = kernel::make_layout(out.program, pe, cores);
    return out;
}

} // namespace

// Every candidate fits, and its SBUF and PSUM bytes are what the kernel's own layout takes
// (random shapes on trn1 and trn2).
TEST(GemmBlocking, CandidatesFitAsTheKernelLayoutCounts) {
    test::XorShift64 rng{7};
    auto below = [&](uint64_t n) { return rng() % n; };
    for (const char* platform : {"trn1", "trn2"}) {
        PeConfig pe = pe_of(platform);
        for (int i = 0; i < 6; ++i) {
            GemmShape s = shape(128 + below(4000), 128 + below(9000), 512 + below(6000),
                                i % 3 == 2 ? Dtype::Fp32 : Dtype::Bf16);
            auto all = gemm_blocking_candidates(s, pe);
            ASSERT_FALSE(all.empty());
            for (size_t c = 0; c < all.size(); c += all.size() / 5 + 1) {
                const GemmBlocking& b = all[c];
                Built k = build(s, b, pe);
                EXPECT_EQ(k.layout.sbuf_bytes, gemm_sbuf_bytes(s, b)) << b.bm << " " << b.bn << " " << b.bk;
                EXPECT_EQ(k.layout.psum_bytes, gemm_psum_bytes(s, b, pe));
                EXPECT_LE(k.layout.sbuf_bytes, pe.sbuf_partition_bytes);
            }
        }
    }
}

// The estimate: tensor time is every matmul at the larger of its compute and its PSUM write;
// HBM bytes are A once per column block, B once per row block, C once; a single A buffer adds
// the loads to the matmuls.
TEST(GemmBlocking, EstimateFollowsItsRules) {
    PeConfig pe = pe_of("trn1");
    GemmShape s = shape(4096, 8192, 8192);
    GemmBlocking b{2048, 1024, 1024, 2, 2, 4};
    GemmBlockingCost c = gemm_blocking_cost(s, b, pe, rates());
    double matmul = std::max(pe.matmul_time(128, 512, Dtype::Bf16).ns,
                             pe.psum_latency.ns + 2048.0 / pe.psum_partition_bandwidth.bytes_per_s * 1e9);
    EXPECT_NEAR(c.tensor_ns, 32.0 * 16 * 64 * matmul, 1e-6 * c.tensor_ns);
    EXPECT_DOUBLE_EQ(c.hbm_bytes, 2.0 * (4096.0 * 8192 * 8 + 8192.0 * 8192 * 2 + 4096.0 * 8192));
    EXPECT_NEAR(c.dma_ns, c.hbm_bytes / 272, 1e-6);
    EXPECT_EQ(c.bound, "tensor");
    GemmBlockingCost single = gemm_blocking_cost(s, {2048, 1024, 1024, 1, 2, 4}, pe, rates());
    EXPECT_GT(single.total_ns, c.total_ns + 0.9 * (c.hbm_bytes - 4096.0 * 8192 * 2) / 272);
    // Small K blocks: every 128 x 512 tile is added into the accumulator once per K block.
    GemmBlockingCost thin = gemm_blocking_cost(s, {2048, 1024, 128, 2, 2, 4}, pe, rates());
    EXPECT_EQ(thin.bound, "vector");
    EXPECT_GT(thin.total_ns, c.total_ns);
}

// The estimate's DMA rate is the engines' transfer-shape rule as a closed form (docs/models/dma.md,
// "Transfer shape"): on trn1, runs of >= 2 KiB in whole packets give 16 x 17 B/ns, 1 KiB runs
// 16 x 12.36 B/ns (the figure table), a 2668 B run two packets; the closed form equals the DMA
// block's own rule (DmaCostRules::engine_rate, an engine's share of separate-run rows) on random
// valid DMA parameters, and the stack's side still derates short runs.
TEST(GemmBlocking, DmaRateIsTheEnginesTransferShapeRule) {
    DmaConfig dma = ConfigTree::from_file(test::platform("trn1")).load<DmaConfig>("dma");
    GemmRates r = rates(1e9, 0);
    r.use_engines(dma);
    EXPECT_NEAR(r.run_rate(4096), 272.0, 0.01);  // dma.packet_overhead is 45.18 ns, rounded
    EXPECT_NEAR(r.run_rate(2048), 272.0, 0.01);
    EXPECT_NEAR(r.run_rate(1024), 16 * 12.36, 0.1);
    EXPECT_NEAR(r.run_rate(2668), 16 * 2668 / (2 * dma.packet_overhead.ns + 2668 / 27.2), 1e-6);
    test::XorShift64 rng{0x5eed5eedull};
    for (int i = 0; i < 200; ++i) {
        DmaConfig d = dma;
        d.engines = uint32_t(1 + rng() % 32);
        d.burst_size = uint64_t(64) << (rng() % 7);
        d.packet_overhead = Duration{double(rng() % 20000) / 100};
        d.engine_bandwidth = Bandwidth{1e9 * double(1 + rng() % 64)};
        d.partitions_per_engine = uint32_t(1 + rng() % 16);
        GemmRates g = rates(1e12, 0);
        g.use_engines(d);
        const uint64_t run = 1 + rng() % 20000;
        const double mechanism = double(d.engines) * DmaCostRules::from(d).engine_rate(run);
        EXPECT_NEAR(g.run_rate(double(run)), mechanism, 1e-9 * mechanism) << i << ": run " << run;
    }
    GemmRates stack = rates(100, 0);
    stack.full_run_bytes = 2048;
    stack.use_engines(dma);
    EXPECT_NEAR(stack.run_rate(512), 100 * std::sqrt(0.25), 1e-9);  // the stack's side binds
}

// The search returns the best-ranked fitting candidate; on a large trn1 GEMM it is tensor-bound
// with A and B double-buffered; a tiny GEMM takes the whole problem as one block.
TEST(GemmBlocking, SearchRanksByTheEstimate) {
    PeConfig pe = pe_of("trn1");
    GemmShape s = shape(4096, 8192, 8192);
    auto ranked = gemm_blocking_search(s, pe, rates(), 50);
    ASSERT_EQ(ranked.size(), 50u);
    for (size_t i = 1; i < ranked.size(); ++i)
        EXPECT_LE(ranked[i - 1].cost.total_ns, ranked[i].cost.total_ns);
    const RankedBlocking& best = ranked[0];
    EXPECT_EQ(best.cost.bound, "tensor");
    EXPECT_EQ(best.blocking.a_bufs, 2u);
    EXPECT_EQ(best.blocking.b_bufs, 2u);
    EXPECT_GE(best.blocking.bk, 768u);  // fewer accumulator passes than matmuls
    for (const GemmBlocking& b : gemm_blocking_candidates(s, pe))
        EXPECT_GE(gemm_blocking_cost(s, b, pe, rates()).total_ns, best.cost.total_ns - 1e-9);
    auto tiny = gemm_blocking_search(shape(128, 128, 512), pe, rates());
    ASSERT_EQ(tiny.size(), 1u);
    EXPECT_EQ(tiny[0].blocking.bm, 128u);
    EXPECT_EQ(tiny[0].blocking.bn, 512u);
    EXPECT_EQ(tiny[0].blocking.bk, 128u);
}

// The whole GEMM over cores: whole matmul tiles of rows per core, the last core the rest, no more
// cores than that leaves rows for; each core's blocking is the search's first.
TEST(GemmBlocking, PlanSplitsRowsOverCores) {
    PeConfig pe = pe_of("trn1");
    GemmWorkload w;
    w.m = w.k = w.n = 4096, w.dtype = Dtype::Bf16, w.tile_m = 128, w.tile_k = 128, w.tile_n = 512;
    uint32_t cores = 0;
    ASSERT_EQ(plan_gemm_cores("all", 2, cores), "");
    EXPECT_EQ(cores, 2u);
    GemmPlan p;
    ASSERT_EQ(plan_gemm(w, cores, pe, rates(), p), "");
    EXPECT_EQ(p.cores, 2u);
    EXPECT_EQ(p.rows_per_core, 2048u);
    EXPECT_DOUBLE_EQ(p.flops(), 2.0 * 4096.0 * 4096.0 * 4096.0);
    auto best = gemm_blocking_search(p.core, pe, rates());
    EXPECT_EQ(p.chosen.blocking.bm, best[0].blocking.bm);
    EXPECT_EQ(p.chosen.blocking.bk, best[0].blocking.bk);
    w.m = 1000;  // 4 cores: 256, 256, 256, 232 rows
    ASSERT_EQ(plan_gemm(w, 4, pe, rates(), p), "");
    EXPECT_EQ(p.rows_per_core, 256u);
    EXPECT_EQ(p.cores, 4u);
    w.m = 200;  // 8 cores asked for, but 128-row tiles leave rows for 2
    ASSERT_EQ(plan_gemm(w, 8, pe, rates(), p), "");
    EXPECT_EQ(p.cores, 2u);
    EXPECT_NE(plan_gemm_cores("3", 2, cores).find("has 2 NeuronCores"), std::string::npos);
    EXPECT_NE(plan_gemm_cores("two", 2, cores).find("1..2 or all"), std::string::npos);
    w.m = 4096, w.tile_n = 1024;  // wider than the array's moving limit
    EXPECT_NE(plan_gemm(w, 1, pe, rates(), p).find("workload.tile_m/tile_k/tile_n"), std::string::npos);
}

// The kernel's instruction counts follow its blocking, ragged dimensions included: every matmul
// of the m x k x n product once, one accumulator pass per C tile and K block, one DMA per block
// operand (two when the K block ends in a partial tile), one store per row tile of a C block.
TEST(GemmBlockedKernel, CountsFollowTheBlockingWithRaggedShapes) {
    PeConfig pe = pe_of("trn2");
    for (auto [m, k, n] : {std::tuple<uint64_t, uint64_t, uint64_t>{1024, 2048, 2048}, {1000, 1500, 1100}}) {
        GemmShape s = shape(m, k, n);
        GemmBlocking b{512, 1024, 640, 2, 2, 4};
        Built kp = build(s, b, pe);
        kernel::KernelCounts c = kernel::check_kernel(kp.program, kp.layout, 0, pe, {});
        auto tiles = [](uint64_t d, uint64_t t) { return (d + t - 1) / t; };
        uint64_t mb = tiles(m, 512), nb = tiles(n, 1024), kb = tiles(k, 640);
        // Per row block: the row tiles of each block, summed over blocks (ragged last block).
        uint64_t mt = tiles(m, 128), nt = 0;
        for (uint64_t j = 0; j < nb; ++j)
            nt += tiles(std::min<uint64_t>(1024, n - j * 1024), 512);
        EXPECT_EQ(c.per_op["matmul"], mt * nt * tiles(k, 128)) << m;
        EXPECT_EQ(c.per_op["tensor_copy"] + c.per_op["tensor_tensor"], mt * nt * kb);
        EXPECT_EQ(c.per_op["tensor_copy"], mt * nt);
        EXPECT_EQ(c.per_op["activation"], mt * nb);
        uint64_t partial_k = (k % 640) % 128 ? 1 : 0;  // only the last K block can end in a partial tile
        uint64_t loads_per_step_a = 1;
        EXPECT_EQ(c.dma_bytes_in, 2 * (m * k * nb + k * n * mb));
        EXPECT_EQ(c.dma_bytes_out, 2 * m * n);
        EXPECT_EQ(c.per_unit[size_t(Unit::DmaIn)], mb * nb * (kb * 2 * loads_per_step_a + 2 * partial_k));
        EXPECT_DOUBLE_EQ(c.flops, 2.0 * m * k * n);
    }
}

// Several cores: instance pid owns rows [pid x MC, ...); the last one takes the ragged rest.
TEST(GemmBlockedKernel, CoresSplitTheRows) {
    PeConfig pe = pe_of("trn2");
    GemmShape s = shape(1000, 512, 512);  // 1000 rows over 4 cores: 250, 250, 250, 250
    s.m = 256;                             // rows per core (MC), a multiple of 128 here
    GemmBlocking b{256, 512, 512, 2, 2, 4};
    Built kp = build(s, b, pe, 4, 1000);
    EXPECT_EQ(kp.layout.grid, 4u);
    for (uint32_t i = 0; i < 4; ++i) {
        kernel::KernelCounts c = kernel::check_kernel(kp.program, kp.layout, i, pe, {});
        uint64_t rows = std::min<uint64_t>(256, 1000 - i * 256);
        EXPECT_DOUBLE_EQ(c.flops, 2.0 * rows * 512 * 512) << i;
        EXPECT_EQ(c.dma_bytes_out, 2 * rows * 512) << i;
    }
}

namespace {
// The program with its keys in reading order (the format's own order, the rest alphabetical).
nlohmann::ordered_json readable(const json& j) {
    if (j.is_array()) {
        nlohmann::ordered_json a = nlohmann::ordered_json::array();
        for (auto& e : j)
            a.push_back(readable(e));
        return a;
    }
    if (!j.is_object())
        return nlohmann::ordered_json(j);
    static const char* first[] = {"format", "version", "name", "source", "args", "grid", "tensors", "buffers", "loop",
                                  "trip", "if", "op", "func", "operator", "dst", "src", "stationary", "moving", "in0",
                                  "in1", "start", "stop", "body", "else"};
    nlohmann::ordered_json o = nlohmann::ordered_json::object();
    for (const char* k : first)
        if (j.contains(k) && std::string(k) != "body" && std::string(k) != "else")
            o[k] = readable(j[k]);
    for (auto& [k, v] : j.items())
        if (!o.contains(k) && k != "body" && k != "else")
            o[k] = readable(v);
    for (const char* k : {"body", "else"})
        if (j.contains(k))
            o[k] = readable(j[k]);
    return o;
}
} // namespace

// configs/kernels/gemm_blocked.json is gemm_blocked_kernel(bf16) (NCTLM_UPDATE_KERNELS=1 rewrites it).
TEST(GemmBlockedKernel, ShippedJsonIsTheBuildersOutput) {
    std::string path = test::source_path("configs/kernels/gemm_blocked.json");
    json built = gemm_blocked_kernel(Dtype::Bf16);
    if (const char* u = std::getenv("NCTLM_UPDATE_KERNELS"); u && std::string(u) == "1") {
        std::ofstream(path) << readable(built).dump(1) << "\n";
        GTEST_SKIP() << "rewrote " << path;
    }
    std::ifstream in(path);
    ASSERT_TRUE(in);
    EXPECT_EQ(json::parse(in), built) << "regenerate with NCTLM_UPDATE_KERNELS=1";
}
