// The kernel library (configs/kernels/NAME.json, traced from kernels/NAME.py) on the simulator:
// every kernel runs on trn1 and trn2 at reduced shapes; the bytes it moves and the matmul work it
// does are the tensors' sizes and 2 M N K where those are the whole story, and equal its
// closed-form roofline's (models/analytic/kernel_roofline.h) always; the roofline is a floor of
// the simulated wall and of every engine's busy time, on the shipped platforms and on random
// valid PE and DMA parameters.
#include "tests/support.h"
#include "tests/xorshift.h"

#include <fmt/format.h>
#include <fstream>
#include <tuple>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using namespace nctlm;
using json = nlohmann::json;

namespace {

struct Case {
    const char* kernel;
    std::vector<std::pair<const char*, int64_t>> args;
};

// The reduced shapes of kernels/library.py's "test" entries.
const std::vector<Case> kCases = {
    {"gemm", {{"M", 256}, {"K", 512}, {"N", 1024}, {"BM", 256}, {"BN", 512}, {"BK", 256}}},
    {"flash_attention", {{"H", 4}, {"KVH", 2}, {"S", 1024}, {"D", 64}}},
    {"gqa_decode", {{"PAIRS", 64}, {"G", 4}, {"C", 1024}, {"D", 64}}},
    {"rmsnorm", {{"ROWS", 300}, {"COLS", 512}}},
    {"layernorm", {{"ROWS", 300}, {"COLS", 512}}},
    {"softmax", {{"ROWS", 300}, {"COLS", 512}}},
    {"silu_mul", {{"ROWS", 300}, {"COLS", 1000}, {"TC", 512}}},
    {"add", {{"ROWS", 300}, {"COLS", 1000}, {"TC", 512}}},
};

int64_t arg(const Case& c, const std::string& name) {
    for (auto& [n, v] : c.args)
        if (n == name)
            return v;
    throw std::logic_error("no arg " + name);
}

json run(const std::string& platform, const Case& c, const std::string& extra = "") {
    std::string sets;
    for (auto& [n, v] : c.args)
        sets += fmt::format(" --set kernel.{}={}", n, v);
    std::string stats = test::temp_file("", ".json");
    test::CliResult r = test::run_cli(
        fmt::format("run -p {} -t kernel -w {}{}{} -q -o {}", platform, c.kernel, sets, extra, stats));
    EXPECT_EQ(r.exit_code, 0) << c.kernel << " on " << platform << extra << ": " << r.err;
    std::ifstream in(stats);
    json j = json::parse(in, nullptr, false);
    std::remove(stats.c_str());
    return j.is_object() ? j["results"] : json::object();
}

// The roofline accounts for exactly the traffic and matmul work the simulation did, and bounds it.
void expect_roofline_floor(const json& r, const std::string& where) {
    ASSERT_TRUE(r.contains("roofline")) << where;
    const json& roof = r["roofline"];
    EXPECT_EQ(r["dma"]["bytes_in"].get<double>(), roof["bytes_in"].get<double>()) << where;
    EXPECT_EQ(r["dma"]["bytes_out"].get<double>(), roof["bytes_out"].get<double>()) << where;
    EXPECT_EQ(r["flops"].get<double>(), roof["flops"].get<double>()) << where;
    double wall = r["sim_time_ns"].get<double>();
    EXPECT_GE(wall * (1 + 1e-6), roof["ns"].get<double>()) << where;
    for (const char* engine : {"tensor", "vector", "scalar"})
        EXPECT_GE(r["engines"][engine]["busy_ns"].get<double>() * (1 + 1e-6), roof["ceilings"][engine].get<double>())
            << where << " " << engine;
    EXPECT_GE(r["engines"]["dma issue"]["busy_ns"].get<double>() * (1 + 1e-6),
              roof["ceilings"]["dma issue"].get<double>())
        << where;
    EXPECT_GE(wall, roof["ceilings"]["hbm stack"].get<double>()) << where;
}

} // namespace

TEST(KernelLibrary, EveryKernelRunsOnTrn1AndTrn2WithItsTensorsTrafficAndWork) {
    for (const char* platform : {"trn1", "trn2"})
        for (const Case& c : kCases) {
            std::string where = fmt::format("{} on {}", c.kernel, platform);
            json r = run(platform, c);
            ASSERT_TRUE(r.contains("sim_time_ns")) << where;
            EXPECT_EQ(r["kernel"], c.kernel);
            EXPECT_GT(r["sim_time_ns"].get<double>(), 0) << where;
            EXPECT_FALSE(r["bound"].get<std::string>().empty()) << where;
            double in = r["dma"]["bytes_in"].get<double>(), out = r["dma"]["bytes_out"].get<double>();
            std::string k = c.kernel;
            if (k == "add" || k == "silu_mul" || k == "softmax" || k == "rmsnorm" || k == "layernorm") {
                double x = 2.0 * double(arg(c, "ROWS")) * double(arg(c, "COLS"));  // one bf16 [ROWS, COLS]
                double weights = 2.0 * 128 * double(arg(c, "COLS"));             // a stride-0 broadcast load
                double expected_in = k == "add" || k == "silu_mul" ? 2 * x
                                     : k == "rmsnorm"               ? x + weights
                                     : k == "layernorm"             ? x + 2 * weights
                                                                    : x;
                EXPECT_EQ(in, expected_in) << where;
                EXPECT_EQ(out, x) << where;
                EXPECT_EQ(r["flops"].get<double>(), 0) << where;
            } else if (k == "gemm") {
                double m = double(arg(c, "M")), kk = double(arg(c, "K")), n = double(arg(c, "N"));
                EXPECT_EQ(r["flops"].get<double>(), 2 * m * n * kk) << where;
                // A is read once per column block, B once per row block.
                EXPECT_EQ(in, 2 * (kk * m * n / double(arg(c, "BN")) + kk * n * m / double(arg(c, "BM")))) << where;
                EXPECT_EQ(out, 2 * m * n) << where;
            } else if (k == "gqa_decode") {
                // q, K and V read once each; QK^T and PV: 2 G D C flops each per pair.
                double pairs = double(arg(c, "PAIRS")), g = double(arg(c, "G")), ctx = double(arg(c, "C")),
                       d = double(arg(c, "D"));
                EXPECT_EQ(in, 2 * pairs * (d * g + 2 * ctx * d)) << where;
                EXPECT_EQ(out, 2 * pairs * g * d) << where;
                EXPECT_EQ(r["flops"].get<double>(), 2 * 2 * pairs * g * d * ctx) << where;
            } else {
                double h = double(arg(c, "H")), s = double(arg(c, "S")), d = double(arg(c, "D"));
                EXPECT_EQ(out, 2 * h * s * d) << where;
                EXPECT_GT(in, 2 * h * s * d * 3 / (h / double(arg(c, "KVH")))) << where;  // q, k, v at least once
            }
            expect_roofline_floor(r, where);
        }
}

TEST(KernelLibrary, TheRooflineIsAFloorOnRandomValidParameters) {
    test::XorShift64 rng{20};
    auto pick = [&](std::initializer_list<const char*> values) {
        return *(values.begin() + rng() % values.size());
    };
    for (int trial = 0; trial < 12; ++trial) {
        std::string extra = fmt::format(
            " --set pe.vector_clock={} --set pe.scalar_clock={} --set pe.tensor_clock={} --set dma.packet_overhead={}"
            " --set pe.sbuf_partition_bandwidth={} --set pe.vector_bf16_speedup={} --set dma.start_latency={}",
            pick({"0.5GHz", "1.12GHz", "2GHz"}), pick({"0.7GHz", "1.4GHz", "3GHz"}), pick({"1GHz", "2.8GHz"}),
            pick({"0ns", "45.18ns", "200ns"}), pick({"2GB/s", "4GB/s", "16GB/s"}), pick({"1", "2", "4"}),
            pick({"0ns", "1300ns"}));
        const Case& c = kCases[rng() % kCases.size()];
        const char* platform = pick({"trn1", "trn2"});
        json r = run(platform, c, extra);
        expect_roofline_floor(r, fmt::format("{} on {}{}", c.kernel, platform, extra));
    }
}

// docs/kernels.md's limits: the row kernels keep 18, 28, 16 bytes per column (and a few for the
// statistics) per partition in SBUF; the widest rows that fit trn1's 192 KiB load, one more
// column block does not (exit 2 naming the SBUF overflow).
TEST(KernelLibrary, RowKernelsFitSbufUpToTheDocumentedWidths) {
    for (auto [kernel, per_col, fixed] : {std::tuple{"rmsnorm", 18, 20}, std::tuple{"layernorm", 28, 44},
                                          std::tuple{"softmax", 16, 24}}) {
        int64_t widest = (192 * 1024 - fixed) / per_col;
        for (int64_t cols : {widest, widest + 1}) {
            test::CliResult r = test::run_cli(
                fmt::format("validate -p trn1 -t kernel -w {} --set kernel.ROWS=128 --set kernel.COLS={}", kernel, cols));
            EXPECT_EQ(r.exit_code, cols == widest ? 0 : 2) << kernel << " COLS=" << cols << ": " << r.err;
            if (cols > widest) {
                EXPECT_NE(r.err.find("the SBUF buffers need"), std::string::npos) << r.err;
            }
        }
    }
}

// A library kernel run with arguments outside its requirements is refused (exit 2 naming the
// argument), not run with the remainder silently left out of its loops.
TEST(KernelLibrary, ArgumentsOutsideTheRequirementsAreRefused) {
    for (auto [kernel, set, says] : {std::tuple{"gqa_decode", "kernel.C=1000", "C must be a multiple of 512"},
                                     std::tuple{"gqa_decode", "kernel.PAIRS=48", "PAIRS must be a multiple"},
                                     std::tuple{"gemm", "kernel.M=1000", "M, N and K must be multiples of BM, BN and BK"}}) {
        test::CliResult r = test::run_cli(fmt::format("run -p trn2 -t kernel -w {} --set {} -q", kernel, set));
        EXPECT_EQ(r.exit_code, 2) << kernel << " " << set;
        EXPECT_NE(r.err.find(says), std::string::npos) << r.err;
    }
}
