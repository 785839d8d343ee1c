#include "testbenches/runner.h"

#include "models/common/errors.h"
#include "models/common/sim.h"
#include "models/common/stats.h"
#include "models/common/trace.h"
#include "models/common/version.h"
#include "platforms/shipped_configs.h"
#include "testbenches/testbench.h"

#include <chrono>
#include <cstdio>
#include <fmt/format.h>
#include <unistd.h>

namespace nctlm {
namespace {

// Runs the kernel in slices so a long run can report progress without touching the models.
void simulate(bool progress) {
    using clock = std::chrono::steady_clock;
    auto start = clock::now();
    if (!progress) {
        sc_core::sc_start();
        return;
    }
    auto last = start;
    // Before the first sc_start nothing is pending yet (processes start at initialization), so
    // run a slice first; starvation ends a slice at the last event, keeping now_ns() exact.
    do {
        sc_core::sc_start(sc_core::sc_time(10, sc_core::SC_US), sc_core::SC_EXIT_ON_STARVATION);
        auto now = clock::now();
        if (now - last > std::chrono::seconds(1)) {
            double wall = std::chrono::duration<double>(now - start).count();
            fmt::print(stderr, "\r[nctlm] simulated {:.3f} us in {:.1f} s, {:.0f} delta cycles/s   ",
                       now_ns() / 1e3, wall, double(sc_core::sc_delta_count()) / wall);
            last = now;
        }
    } while (sc_core::sc_pending_activity() && sc_core::sc_get_status() != sc_core::SC_STOPPED);
    fmt::print(stderr, "\n");
}

// Every "*_ns" figure onto the kernel's fs grid (see on_fs_grid), recursively.
nlohmann::json on_fs_grid(nlohmann::json j, bool is_ns = false) {
    if (j.is_object()) {
        for (auto& [k, v] : j.items())
            v = on_fs_grid(v, k.size() > 3 && k.compare(k.size() - 3, 3, "_ns") == 0);
    } else if (j.is_array()) {
        for (auto& v : j)
            v = on_fs_grid(v, is_ns);
    } else if (is_ns && j.is_number_float()) {
        j = nctlm::on_fs_grid(j.get<double>());
    }
    return j;
}

} // namespace

LoadedRun::LoadedRun() = default;
LoadedRun::LoadedRun(LoadedRun&&) = default;
LoadedRun::~LoadedRun() = default;

LoadedRun load_run(const RunOptions& o) {
    LoadedRun r;
    r.tree = ConfigTree::from_file(find_config(o.platform_file, "platforms"));
    const TestbenchInfo* program_tb = find_testbench(o.testbench);
    if (program_tb && !program_tb->program_workload)
        program_tb = nullptr;
    if (!o.workload_file.empty() && !program_tb)
        r.tree.merge_file(find_config(o.workload_file, "workloads"));
    for (auto& s : o.overrides)
        r.tree.set(s);
    r.cfg = PlatformConfig::load(r.tree);
    r.tb = make_testbench(o.testbench);
    if (program_tb && !o.workload_file.empty())
        r.tb->set_program_file(find_config(o.workload_file, program_tb->program_kind));
    // A testbench whose workload has required keys, run without one: say what to pass instead of
    // "missing key 'workload.m'".
    if (const TestbenchInfo* info = find_testbench(o.testbench); info && !r.tree.root()["workload"])
        for (auto& s : info->sections) {
            if (s.section != "workload")
                continue;
            bool required = false;
            for (auto& p : s.params())
                required = required || !p.default_text;
            if (!required)
                continue;
            std::string shipped;
            for (auto& w : shipped_configs("workloads"))
                if (w.rfind(o.testbench + "_", 0) == 0)
                    shipped += "\n  -w " + w;
            throw ConfigError("testbench '" + o.testbench + "' needs a workload: pass -w FILE" +
                              (shipped.empty() ? "" : " (shipped:" + shipped + ")") +
                              "\nor set its required keys with --set workload.KEY=VALUE (nctlm describe " +
                              o.testbench + ")");
        }
    r.tb->configure(r.tree);
    r.tree.check_sections(PlatformConfig::sections());
    if (o.max_memory) {
        // The estimate counts what grows with the configuration: the testbench's records, the
        // trace buffer (~64 B an event) and a fixed base for the kernel, modules and stats.
        constexpr uint64_t kBase = 64ull << 20, kTraceEvent = 64;
        uint64_t trace = o.trace_file.empty() ? 0 : uint64_t(o.trace_max_events) * kTraceEvent;
        uint64_t estimate = kBase + trace + r.tb->memory_estimate();
        if (estimate > o.max_memory)
            throw ConfigError(fmt::format("--max-memory {}: this run needs about {} (testbench {}, trace {}, base {}); "
                                          "raise --max-memory or make the run smaller",
                                          format_bytes(o.max_memory), format_bytes(estimate),
                                          format_bytes(r.tb->memory_estimate()), format_bytes(trace),
                                          format_bytes(kBase)));
    }
    return r;
}

RunOutcome run(const RunOptions& o) {
    LoadedRun loaded = load_run(o);
    ConfigTree& tree = loaded.tree;
    PlatformConfig& cfg = loaded.cfg;
    std::unique_ptr<Testbench>& tb = loaded.tb;

    init_kernel(o.warnings_are_errors);
    if (!o.trace_file.empty())
        trace().enable(o.trace_start_ns, o.trace_end_ns < 0 ? 1e300 : o.trace_end_ns, o.trace_max_events);
    Platform top("top", cfg);
    tb->build(top);

    auto wall_start = std::chrono::steady_clock::now();
    simulate(o.progress && isatty(fileno(stderr)));
    double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
    if (sc_core::sc_get_status() != sc_core::SC_STOPPED)
        sc_core::sc_stop();  // runs end_of_simulation() callbacks, which finalize stats

    RunOutcome out;
    out.errors = sim_errors();
    auto blocked = top.blocked_engines();
    if (!blocked.empty() && out.errors.empty()) {
        out.errors.push_back(fmt::format("deadlock: the simulation ended at {:.3f} ns with engines waiting on "
                                         "semaphores nothing will signal:",
                                         now_ns()));
        for (auto& s : blocked)
            out.errors.push_back("  " + s);
    }
    auto stuck = top.outstanding_report();
    if (!stuck.empty() && out.errors.empty()) {
        out.errors.push_back(fmt::format("simulation ended at {:.3f} ns with {} transfer(s) still in flight "
                                         "(deadlock or lost response):",
                                         now_ns(), stuck.size()));
        for (auto& s : stuck)
            out.errors.push_back("  " + s);
    }
    out.report["nctlm_version"] = version();
    out.report["platform"] = cfg.platform.name;
    out.report["testbench"] = o.testbench;
    out.report["config"] = tree.effective();
    // A failed run's figures are not results: leave them out rather than report a wrong number.
    out.report["results"] = out.errors.empty() ? on_fs_grid(tb->results()) : nlohmann::json(nullptr);
    out.report["stats"] = stats().to_json();
    out.report["sim"] = {{"simulated_ns", now_ns()},
                         {"wall_s", wall_s},
                         {"delta_cycles", sc_core::sc_delta_count()},
                         {"errors", out.errors}};
    if (top.flow()) {  // what the flow model did per descriptor, and its table's origin
        const double n = stats().value("top.flow.descriptors");
        out.report["sim"]["flow"] = {
            {"descriptors", n},
            {"kernel_events_per_descriptor", n > 0 ? stats().value("top.flow.kernel_wakes") / n : 0},
            {"solver_events_per_descriptor", n > 0 ? stats().value("top.flow.solver_events") / n : 0},
            {"classes", stats().value("top.flow.classes")},
            {"table", top.flow_table_origin()}};
    }
    out.summary = tb->summary();
    if (!o.trace_file.empty()) {
        trace().write(o.trace_file);
        out.summary += fmt::format("\ntrace: {} events written to {}{}", trace().size(), o.trace_file,
                                   trace().dropped() ? fmt::format(" ({} dropped by the cap)", trace().dropped()) : "");
    }
    return out;
}

} // namespace nctlm
