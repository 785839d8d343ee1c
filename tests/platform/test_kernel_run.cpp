// Kernel programs on whole platforms (the `kernel` testbench, `nctlm kernel`, exit codes): figures
// that follow from the program, the trace's spans, bounded memory on long programs, and the
// run-time deadlock report.
#include "models/pe/processing_element.h"
#include "tests/support.h"
#include "tests/xorshift.h"
#include "testbenches/testbench.h"

#include <algorithm>
#include <cstdlib>
#include <fmt/format.h>
#include <fstream>
#include <new>
#include <gtest/gtest.h>
#include <map>
#include <nlohmann/json.hpp>
#include <malloc.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace nctlm;
using json = nlohmann::json;

namespace {
// A kernel run: `kernel` a shipped name or a file path.
RunOutcome run_kernel(const std::string& platform, const std::string& kernel, std::vector<std::string> sets = {}) {
    RunOptions o;
    o.platform_file = test::platform(platform);
    o.testbench = "kernel";
    o.workload_file = kernel;
    o.overrides = std::move(sets);
    return run(o);
}

// A kernel run with a trace; returns the trace.
json traced(const std::string& platform, const std::string& kernel) {
    std::string trace = test::temp_file("", ".json");
    RunOptions o;
    o.platform_file = test::platform(platform);
    o.testbench = "kernel";
    o.workload_file = kernel;
    o.trace_file = trace;
    RunOutcome out = run(o);
    EXPECT_TRUE(out.errors.empty()) << (out.errors.empty() ? "" : out.errors[0]);
    std::ifstream in(trace);
    return json::parse(in);
}

const json& results(const RunOutcome& out) {
    EXPECT_TRUE(out.errors.empty()) << (out.errors.empty() ? "" : out.errors[0]);
    return out.report["results"];
}
} // namespace

TEST(KernelRun, AddMovesItsTensorsAndBindsOnTheMemorySide) {
    auto out = run_kernel("trn1", "add", {"kernel.ROWS=512", "kernel.COLS=1024"});
    const json& r = results(out);
    EXPECT_EQ(r["dma"]["bytes_in"], 2u * 512 * 1024 * 2);
    EXPECT_EQ(r["dma"]["bytes_out"], 512u * 1024 * 2);
    EXPECT_EQ(r["instructions_by_op"]["dma"], 12u);
    EXPECT_EQ(r["instructions_by_op"]["tensor_tensor"], 4u);
    EXPECT_EQ(r["engines"]["vector"]["instructions"], 4u);
    EXPECT_GT(r["sim_time_ns"].get<double>(), 0);
    EXPECT_EQ(r["flops"], 0.0);
    EXPECT_NE(r["bound"], "engine");  // two loads and a store per vector add of 1024 elements
}

TEST(KernelRun, GemmFlopsAndFractionOfPeakFollowFromTheShape) {
    auto out = run_kernel("trn1", "gemm",
                          {"kernel.M=512", "kernel.N=1024", "kernel.K=1024", "kernel.BM=512", "kernel.BN=1024",
                           "kernel.BK=512"});
    const json& r = results(out);
    EXPECT_DOUBLE_EQ(r["flops"].get<double>(), 2.0 * 512 * 1024 * 1024);
    double wall_s = r["sim_time_ns"].get<double>() * 1e-9;
    EXPECT_NEAR(r["tflops"].get<double>(), r["flops"].get<double>() / wall_s / 1e12, 1e-9);
    double peak = 2.0 * 128 * 128 * 2.8e9;  // trn1 bf16
    EXPECT_NEAR(r["fraction_of_peak"].get<double>(), r["flops"].get<double>() / wall_s / peak, 1e-9);
    EXPECT_GT(r["fraction_of_peak"].get<double>(), 0.1);
    EXPECT_LE(r["fraction_of_peak"].get<double>(), 1.0);
    EXPECT_EQ(r["engines"]["tensor"]["instructions"], (512u / 128) * (1024u / 512) * (1024u / 128));
}

// pe.launch_overhead (per kernel: launch, instruction fetch, semaphore and DMA ring set-up) is paid
// before the sequencer starts: the device latency is the profiled window plus exactly that, and the
// window itself does not move (refresh off: with refresh on, a later start meets the refreshes
// elsewhere). On random platforms, kernels and overheads.
TEST(KernelRun, LaunchOverheadPrecedesTheProfiledWindow) {
    test::XorShift64 rng{22};
    const std::vector<std::pair<std::string, std::vector<std::string>>> kernels = {
        {"add", {"kernel.ROWS=300", "kernel.COLS=256"}},
        {"gemm", {"kernel.M=256", "kernel.K=256", "kernel.N=512", "kernel.BM=256", "kernel.BN=512", "kernel.BK=256"}},
        {"softmax", {"kernel.ROWS=256", "kernel.COLS=512"}}};
    for (int trial = 0; trial < 6; ++trial) {
        std::string platform = rng() % 2 ? "trn1" : "trn2";
        auto [kernel, sets] = kernels[rng() % kernels.size()];
        double overhead_ns = double(rng() % 20000);
        // One simulation per process: each run in its own.
        auto run_with = [&](double ns) {
            std::string stats = test::temp_file("", ".json"), args;
            for (const std::string& s : sets)
                args += " --set " + s;
            test::CliResult r = test::run_cli(fmt::format("run -p {} -t kernel -w {}{} --set hbm.refresh=off "
                                                          "--set pe.launch_overhead={}ns -q -o {}",
                                                          platform, kernel, args, ns, stats));
            EXPECT_EQ(r.exit_code, 0) << r.err;
            std::ifstream in(stats);
            json report = json::parse(in, nullptr, false);
            std::remove(stats.c_str());
            return report.is_discarded() ? json::object() : report["results"];
        };
        const json a = run_with(0), b = run_with(overhead_ns);
        std::string where = fmt::format("{} on {} with {} ns", kernel, platform, overhead_ns);
        EXPECT_DOUBLE_EQ(a["launch_overhead_ns"].get<double>(), 0) << where;
        EXPECT_DOUBLE_EQ(a["device_ns"].get<double>(), a["sim_time_ns"].get<double>()) << where;
        EXPECT_NEAR(b["launch_overhead_ns"].get<double>(), overhead_ns, 1e-6) << where;
        EXPECT_NEAR(b["device_ns"].get<double>(), b["sim_time_ns"].get<double>() + overhead_ns, 1e-6) << where;
        EXPECT_NEAR(b["sim_time_ns"].get<double>(), a["sim_time_ns"].get<double>(), 1e-6) << where;
    }
}

TEST(KernelRun, GridInstancesMeetAtBarriersAndRunOnTheirTiles) {
    auto out = run_kernel("trn2", test::source_path("fuzz/corpus/kernel/loops"), {"testbench.core_stride=2"});
    const json& r = results(out);
    EXPECT_EQ(r["grid"], 2u);
    EXPECT_EQ(r["tiles"], json::array({0, 2}));
    EXPECT_EQ(r["per_instance"].size(), 2u);
}

TEST(KernelRun, TraceHasASpanPerInstructionWithItsSourceLine) {
    std::string trace = test::temp_file("", ".json");
    RunOptions o;
    o.platform_file = test::platform("tiny");
    o.testbench = "kernel";
    o.workload_file = "add";
    o.overrides = {"kernel.ROWS=256", "kernel.COLS=256"};
    o.trace_file = trace;
    RunOutcome out = run(o);
    ASSERT_TRUE(out.errors.empty());
    std::ifstream in(trace);
    json t = json::parse(in);
    int spans = 0, with_source = 0;
    for (auto& e : t["traceEvents"])
        if (e["ph"] == "X" && e["args"].contains("instruction")) {
            ++spans;
            if (e["args"].contains("source")) {
                ++with_source;
                EXPECT_EQ(e["args"]["source"].get<std::string>().rfind("add.py:", 0), 0u) << e.dump();
            }
        }
    EXPECT_EQ(spans, 8);  // 2 row blocks x (2 loads, 1 add, 1 store)
    EXPECT_EQ(with_source, spans);
}

// A program of a million instructions is a few hundred bytes and runs in bounded memory: loops
// expand lazily, one lowering per engine, dependency records bounded. Measured as the peak of live
// heap bytes, counted by this binary's operator new/delete, of a whole run in a forked child at
// 250 000 and at 2 000 000 instructions (8x): the two must be about the same. Counting allocations
// rather than reading the OS's peak RSS keeps the figure the program's own: a sandbox may account
// RSS per container or per process tree (CI once reported 245 MB for a 13 MB run).
namespace {
size_t g_live_bytes = 0, g_peak_bytes = 0;
bool g_counting = false;

void* counted_new(size_t n) {
    void* p = std::malloc(n ? n : 1);
    if (!p)
        throw std::bad_alloc();
    if (g_counting) {
        g_live_bytes += malloc_usable_size(p);
        g_peak_bytes = std::max(g_peak_bytes, g_live_bytes);
    }
    return p;
}
void counted_delete(void* p) noexcept {
    if (p && g_counting)
        g_live_bytes -= std::min(g_live_bytes, malloc_usable_size(p));
    std::free(p);
}
} // namespace

void* operator new(size_t n) { return counted_new(n); }
void* operator new[](size_t n) { return counted_new(n); }
void operator delete(void* p) noexcept { counted_delete(p); }
void operator delete[](void* p) noexcept { counted_delete(p); }
void operator delete(void* p, size_t) noexcept { counted_delete(p); }
void operator delete[](void* p, size_t) noexcept { counted_delete(p); }
// The nothrow forms too: whatever one form allocates, another may free (std::stable_sort's buffer).
void* operator new(size_t n, const std::nothrow_t&) noexcept {
    try {
        return counted_new(n);
    } catch (const std::bad_alloc&) {
        return nullptr;
    }
}
void* operator new[](size_t n, const std::nothrow_t& t) noexcept { return operator new(n, t); }
void operator delete(void* p, const std::nothrow_t&) noexcept { counted_delete(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { counted_delete(p); }

namespace {
// Peak live heap bytes of one kernel run in a fresh child (SystemC runs once per process).
size_t peak_heap_bytes(const std::string& file, uint64_t n) {
    int fds[2];
    if (pipe(fds) != 0)
        return 0;
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        g_counting = true;
        RunOutcome out = run_kernel("trn1", file, {"kernel.n=" + std::to_string(n)});
        uint64_t instructions = out.report["results"].value("instructions", uint64_t(0));
        size_t reply[2] = {out.errors.empty() && instructions == n ? g_peak_bytes : 0, size_t(instructions)};
        ssize_t written = write(fds[1], reply, sizeof reply);
        _exit(written == ssize_t(sizeof reply) ? 0 : 1);
    }
    close(fds[1]);
    size_t reply[2] = {0, 0};
    ssize_t got = read(fds[0], reply, sizeof reply);
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
    EXPECT_EQ(got, ssize_t(sizeof reply));
    EXPECT_EQ(reply[1], n) << "the run executed a different number of instructions";
    return reply[0];
}
} // namespace

TEST(KernelRun, InstructionCountDoesNotGrowMemory) {
    std::string file = test::temp_file(R"({"format": "nctlm-kernel", "version": 1, "name": "many", "args": {"n": 1000000},
      "buffers": [{"name": "t", "memory": "sbuf", "partitions": 128, "shape": [64], "dtype": "bf16", "bufs": 4},
                  {"name": "u", "memory": "sbuf", "partitions": 128, "shape": [64], "dtype": "bf16", "bufs": 4}],
      "body": [{"loop": "i", "trip": "n // 2", "body": [
        {"op": "memset", "dst": {"buf": "t", "copy": "i"}, "value": 1},
        {"op": "activation", "func": "exp", "dst": {"buf": "u", "copy": "i"}, "src": {"buf": "t", "copy": "i"}}]}]})",
                                       ".json");
    size_t small = peak_heap_bytes(file, 250000), large = peak_heap_bytes(file, 2000000);
    ASSERT_GT(small, 0u);
    // 64 KiB of slack for the few containers whose capacity depends on the count (none should).
    EXPECT_LT(large, small + 64 * 1024) << "peak live heap " << small << " B at 250 000 instructions, " << large
                                        << " B at 2 000 000";
}

TEST(KernelCli, BadKernelsExitTwoNamingTheInstruction) {
    std::string bad = test::temp_file(R"({"format": "nctlm-kernel", "version": 1,
      "buffers": [{"name": "t", "memory": "sbuf", "partitions": 128, "shape": [64], "dtype": "bf16"}],
      "body": [{"op": "tensor_copy", "dst": {"buf": "t"}, "src": {"buf": "t", "p": [64, 128]}, "line": "mine.py:7"}]})",
                                      ".json");
    auto r = test::run_cli("run -p trn1 -t kernel -w " + bad);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("tensor_copy /body/0 (mine.py:7)"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("partitions [64, 192) are outside buffer 't'"), std::string::npos) << r.err;
    auto typo = test::run_cli("run -p trn1 -t kernel -w add --set kernel.ROWZ=4");
    EXPECT_EQ(typo.exit_code, 2);
    EXPECT_NE(typo.err.find("--set kernel.ROWZ"), std::string::npos) << typo.err;
    EXPECT_NE(typo.err.find("did you mean 'ROWS'"), std::string::npos) << typo.err;
    auto not_int = test::run_cli("run -p trn1 -t kernel -w add --set kernel.ROWS=1.5");
    EXPECT_EQ(not_int.exit_code, 2);
    auto none = test::run_cli("run -p trn1 -t kernel");
    EXPECT_EQ(none.exit_code, 2);
    EXPECT_NE(none.err.find("needs a kernel program"), std::string::npos) << none.err;
    auto missing = test::run_cli("run -p trn1 -t kernel -w /nonexistent.json");
    EXPECT_EQ(missing.exit_code, 2);
    auto too_big = test::run_cli("run -p trn1 -t kernel -w add --set kernel.ROWS=67108864 --set kernel.COLS=1024");
    EXPECT_EQ(too_big.exit_code, 2);
    EXPECT_NE(too_big.err.find("does not fit HBM stack"), std::string::npos) << too_big.err;
    auto schema = test::run_cli("describe kernel --schema");
    EXPECT_EQ(schema.exit_code, 0);
    EXPECT_NO_THROW(json::parse(schema.out));
}

// A program whose engine waits on a semaphore nothing signals: exit 3 naming the engine, the
// instruction and the semaphore (kernel programs are checked so this cannot happen; hand-built
// PE programs and custom testbenches can).
namespace {
class StuckTestbench : public Testbench {
public:
    void configure(const ConfigTree&) override {}
    void build(Platform& p) override {
        Instruction i;
        i.op = Op::VectorOp;
        i.unit = Unit::Vector;
        i.n_free = 8;
        i.partitions = 1;
        i.label = "waits_forever";
        i.waits.push_back({0, 1});
        program_.instructions.push_back(i);
        program_.semaphores = 1;
        program_.semaphore_name = [](uint32_t) { return std::string("the never-signalled semaphore"); };
        ProcessingElement& pe = p.tiles[0].pe;
        sc_core::sc_spawn([this, &pe] { pe.execute(program_); });
    }
    nlohmann::json results() const override { return {}; }

private:
    Program program_;
};
} // namespace

TEST(KernelRun, ADeadlockedEngineIsReportedByName) {
    register_testbench({"stuck", "waits forever", [] { return std::make_unique<StuckTestbench>(); }});
    RunOptions o;
    o.platform_file = test::platform("tiny");
    o.testbench = "stuck";
    RunOutcome out = run(o);
    ASSERT_GE(out.errors.size(), 2u);
    EXPECT_NE(out.errors[0].find("deadlock"), std::string::npos) << out.errors[0];
    EXPECT_NE(out.errors[1].find("vector engine waits at instruction 0 (waits_forever)"), std::string::npos)
        << out.errors[1];
    EXPECT_NE(out.errors[1].find("the never-signalled semaphore to reach 1 (it is at 0)"), std::string::npos)
        << out.errors[1];
}

// Explicit placement (a tensor's "offset") and reading another instance's copy ("instance"): on
// trn2 tiles 0 and 1 share stack 0, so instance 1's copy of x lies exactly `offset` step above
// instance 0's; z, placed after them, starts behind the explicit range; instance 0 reads instance
// 1's copy. Overlapping explicit tensors are refused naming both.
TEST(KernelRun, ExplicitOffsetsPlaceTensorsAndInstancesReadEachOthersCopies) {
    const char* text = R"({"format": "nctlm-kernel", "version": 1, "name": "place", "grid": 2,
      "tensors": [{"name": "x", "shape": [128, 256], "dtype": "bf16", "per_instance": true, "offset": "pid * 2097152 + 65536"},
                  {"name": "z", "shape": [128, 256], "dtype": "bf16", "per_instance": true}],
      "buffers": [{"name": "t", "memory": "sbuf", "partitions": 128, "shape": [256], "dtype": "bf16", "bufs": 3}],
      "body": [{"op": "dma", "dst": {"buf": "t", "copy": 0}, "src": {"tensor": "x", "index": [[0, 128], [0, 256]]}},
               {"op": "dma", "dst": {"buf": "t", "copy": 1}, "src": {"tensor": "z", "index": [[0, 128], [0, 256]]}},
               {"op": "dma", "dst": {"buf": "t", "copy": 2}, "src": {"tensor": "x", "instance": "1 - pid", "index": [[0, 128], [0, 256]]}}]})";
    json t = traced("trn2", test::temp_file(text, ".json"));
    std::map<std::pair<std::string, int64_t>, uint64_t> address;  // (track's process, instruction) -> address
    std::map<int64_t, std::string> process;
    for (auto& e : t["traceEvents"])
        if (e["ph"] == "M" && e["name"] == "process_name")
            process[e["pid"].get<int64_t>()] = e["args"]["name"];
    for (auto& e : t["traceEvents"])
        if (e["ph"] == "X" && e["args"].contains("instruction") && e["args"].contains("address"))
            address[{process[e["pid"].get<int64_t>()], e["args"]["instruction"].get<int64_t>()}] =
                std::stoull(e["args"]["address"].get<std::string>(), nullptr, 16);
    ASSERT_EQ(address.size(), 6u);
    auto at = [&](const char* pe, int64_t instruction) { return address[std::make_pair(std::string(pe), instruction)]; };
    uint64_t x0 = at("top.tile0.pe", 0), x1 = at("top.tile1.pe", 0);
    EXPECT_EQ(x1 - x0, 2097152u);
    EXPECT_GE(at("top.tile0.pe", 1), x1 + 128 * 256 * 2);  // z behind the explicit range
    EXPECT_EQ(at("top.tile0.pe", 2), x1);                    // instance 0 reads instance 1's x
    EXPECT_EQ(at("top.tile1.pe", 2), x0);
    // Instance 1's x at 65536 overlaps instance 0's at [65536, 131072) when the step is 32 KiB.
    std::string bad = text;
    bad.replace(bad.find("pid * 2097152"), 13, "pid * 32768");
    auto refused = test::run_cli("run -q -p " + test::platform("trn2") + " -t kernel -w " + test::temp_file(bad, ".json"));
    EXPECT_EQ(refused.exit_code, 2);
    EXPECT_NE(refused.err.find("overlaps tensor 'x' (instance 0)"), std::string::npos) << refused.err;
}

// Pre-built DMA instructions issued together (no waits between them) reach the DMA queues in
// issue order once their start latency ends together: the first issued completes first.
TEST(KernelRun, DmaInstructionsIssuedTogetherPostInIssueOrder) {
    std::string file = test::temp_file(R"({"format": "nctlm-kernel", "version": 1, "name": "fifo",
      "tensors": [{"name": "x", "shape": [4, 128, 2048], "dtype": "bf16"}],
      "buffers": [{"name": "t", "memory": "sbuf", "partitions": 128, "shape": [2048], "dtype": "bf16", "bufs": 4}],
      "body": [{"loop": "i", "trip": 4, "body": [{"op": "dma", "prebuilt": true, "queue": 0, "dst": {"buf": "t", "copy": "i"},
                "src": {"tensor": "x", "index": [["i", 1], [0, 128], [0, 2048]]}}]}]})",
                                       ".json");
    json t = traced("trn1", file);
    std::map<int64_t, double> end;
    for (auto& e : t["traceEvents"])
        if (e["ph"] == "X" && e["args"].contains("instruction") && e["args"].value("command", "") == "dma")
            end[e["args"]["instruction"].get<int64_t>()] = e["ts"].get<double>() + e["dur"].get<double>();
    ASSERT_EQ(end.size(), 4u);
    for (int64_t i = 1; i < 4; ++i)
        EXPECT_LT(end[i - 1], end[i]) << "instruction " << i - 1 << " completes after instruction " << i;
}

// A store waits for the loads issued before it to land, so its paced posting can run past its turn
// on the engines while the next load is already cutting its own descriptors: each keeps its own.
// (attention_decode's K-cache column store, 128 x 2 B, once posted the next K^T load's 1 KiB
// runs as writes: 19442 B written instead of 12288 under flow, 237 us instead of 100 us.)
TEST(KernelRun, AStorePostingPastItsTurnKeepsItsOwnDescriptors) {
    // Load n; load a wide block w, which lands just after the store's turn begins; store n as a
    // column of c (128 packets of 2 B, posted past its turn by w's landing); store w as 128 rows of
    // 4 KiB, whose turn follows the column's.
    std::string file = test::temp_file(R"({"format": "nctlm-kernel", "version": 1, "name": "column",
      "tensors": [{"name": "k", "shape": [128], "dtype": "bf16"},
                  {"name": "c", "shape": [128, 2048], "dtype": "bf16", "kind": "output"},
                  {"name": "x", "shape": [128, 4096], "dtype": "bf16"},
                  {"name": "y", "shape": [128, 8192], "dtype": "bf16", "kind": "output"}],
      "buffers": [{"name": "n", "memory": "sbuf", "partitions": 1, "shape": [128], "dtype": "bf16", "bufs": 1},
                  {"name": "w", "memory": "sbuf", "partitions": 128, "shape": [2048], "dtype": "bf16", "bufs": 1}],
      "body": [{"op": "dma", "dst": {"buf": "n", "copy": 0}, "src": {"tensor": "k", "offset": 0, "ap": [[0, 1], [1, 128]]}},
               {"op": "dma", "dst": {"buf": "w", "copy": 0}, "src": {"tensor": "x", "offset": 0, "ap": [[4096, 128], [1, 2048]]}},
               {"op": "dma", "dst": {"tensor": "c", "offset": 2047, "ap": [[0, 1], [2048, 128]]}, "src": {"buf": "n", "copy": 0}},
               {"op": "dma", "dst": {"tensor": "y", "offset": 0, "ap": [[8192, 128], [1, 2048]]}, "src": {"buf": "w", "copy": 0}}]})",
                                       ".json");
    for (const char* timing : {"at", "lt", "flow"}) {
        std::string stats = test::temp_file("", ".json");
        test::CliResult cli = test::run_cli(fmt::format("run -p trn1 -t kernel -w {} --timing {} -q -o {}", file, timing, stats));
        ASSERT_EQ(cli.exit_code, 0) << timing << ": " << cli.err;
        std::ifstream in(stats);
        const json report = json::parse(in);
        std::remove(stats.c_str());
        const json& r = report["results"];
        const json& dma = report["stats"]["top"]["tile0"]["dma"];
        EXPECT_EQ(dma["bytes_written"].get<double>(), r["dma"]["bytes_out"].get<double>()) << timing;
        EXPECT_EQ(dma["bytes_read"].get<double>(), r["dma"]["bytes_in"].get<double>()) << timing;
        EXPECT_EQ(r["dma"]["bytes_out"].get<double>(), 256.0 + 128 * 4096) << timing;
    }
}
