#include "testbenches/runner.h"

#include "models/common/errors.h"
#include "models/common/sim.h"
#include "models/common/stats.h"
#include "models/common/trace.h"
#include "models/common/version.h"
#include "platforms/shipped_configs.h"
#include "testbenches/testbench.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <cstdio>
#include <fmt/format.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace nctlm {
namespace {

// Runs the kernel until no event is left or simulated time passes `limit_ns`; true if it stopped
// at the limit with work pending. In slices when reporting progress, without touching the models.
bool simulate(bool progress, double limit_ns) {
    using clock = std::chrono::steady_clock;
    const sc_core::sc_time limit = sc_core::sc_time(limit_ns, sc_core::SC_NS);
    auto start = clock::now();
    auto pending = [] {
        return sc_core::sc_get_status() != sc_core::SC_STOPPED && sc_core::sc_pending_activity();
    };
    if (!progress) {
        // Starvation ends the run at its last event, keeping now_ns() exact.
        sc_core::sc_start(limit, sc_core::SC_EXIT_ON_STARVATION);
        return pending();
    }
    auto last = start;
    // Before the first sc_start nothing is pending yet (processes start at initialization), so
    // run a slice first.
    do {
        sc_core::sc_time slice = std::min(sc_core::sc_time(10, sc_core::SC_US), limit - sc_core::sc_time_stamp());
        sc_core::sc_start(slice, sc_core::SC_EXIT_ON_STARVATION);
        auto now = clock::now();
        if (now - last > std::chrono::seconds(1)) {
            double wall = std::chrono::duration<double>(now - start).count();
            fmt::print(stderr, "\r[nctlm] simulated {:.3f} us in {:.1f} s, {:.0f} delta cycles/s   ",
                       now_ns() / 1e3, wall, double(sc_core::sc_delta_count()) / wall);
            last = now;
        }
    } while (pending() && sc_core::sc_time_stamp() < limit);
    fmt::print(stderr, "\n");
    return pending();
}

// A run stopped at its time limit leaves threads suspended mid-work: kill them, so each unwinds its
// stack (destructors of its locals run) instead of holding heap memory nobody can free.
void kill_threads(const std::vector<sc_core::sc_object*>& objects) {
    for (sc_core::sc_object* o : objects) {
        kill_threads(o->get_child_objects());
        sc_core::sc_process_handle h(o);
        if (h.valid() && h.proc_kind() != sc_core::SC_METHOD_PROC_ && !h.terminated())
            h.kill();
    }
}
// kill() must come from a process: one method, spawned now, runs a delta cycle at the limit.
void stop_every_thread() {
    sc_core::sc_spawn_options method;
    method.spawn_method();
    sc_core::sc_spawn([] { kill_threads(sc_core::sc_get_top_level_objects()); }, "nctlm_time_limit", &method);
    sc_core::sc_start(sc_core::SC_ZERO_TIME);
}

// A stats JSON's config value as the YAML text a config file would hold.
std::string yaml_text(const nlohmann::json& v, const std::string& where) {
    if (v.is_string())
        return v.get<std::string>();
    if (v.is_boolean())
        return v.get<bool>() ? "true" : "false";
    if (v.is_number())
        return v.dump();
    throw ConfigError(where + ": expected a value, found " + v.dump());
}

// The keys the chosen HBM model does not read that a --set gave: warned, since a sweep may vary
// hbm.model over a fixed setting of the other model's keys.
void warn_unread_model_keys(const ConfigTree& tree, const PlatformConfig& cfg, std::vector<std::string>& warnings) {
    for (auto& key : hbm_keys_unread_by(cfg.hbm)) {
        std::string at = tree.where("hbm", key);
        if (at.rfind("--set ", 0) == 0)
            warnings.push_back(fmt::format("{}: hbm.model is {}, which does not read hbm.{}; ignored", at,
                                           cfg.hbm.model == HbmModel::Banked ? "banked" : "pipe", key));
    }
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

// NCTLM_TRACE_WARN_BYTES (for tests) or 200 MB.
size_t trace_warn_bytes() {
    const char* env = std::getenv("NCTLM_TRACE_WARN_BYTES");
    return env ? size_t(std::strtoull(env, nullptr, 10)) : size_t(200) << 20;
}

std::string large_trace_message(size_t estimate, bool final) {
    return fmt::format("the trace {} about {:.3g} MB; --trace-window START..END (e.g. '0 ns..20 us') keeps only a "
                       "stretch of the run, --trace-max-events N caps the spans",
                       final ? "file will be" : "is already", double(estimate) / 1e6);
}

// 0.2 named simulated time `wall_ns` beside host times: 0.3 says `sim_time_ns`. The old name is
// kept as an alias for one release (CHANGELOG), wherever a figure has the new one.
nlohmann::json with_deprecated_aliases(nlohmann::json j) {
    if (j.is_object()) {
        for (auto& [k, v] : j.items())
            v = with_deprecated_aliases(v);
        if (j.contains("sim_time_ns") && !j.contains("wall_ns"))
            j["wall_ns"] = j["sim_time_ns"];
    } else if (j.is_array()) {
        for (auto& v : j)
            v = with_deprecated_aliases(v);
    }
    return j;
}

} // namespace

LoadedRun::LoadedRun() = default;
LoadedRun::LoadedRun(LoadedRun&&) = default;
LoadedRun::~LoadedRun() = default;

ReplayedRun replay_tree(const std::string& path) {
    nlohmann::json stats;
    try {
        std::ifstream in(path);
        if (!in)
            throw ConfigError(path + ": cannot open file");
        stats = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception& e) {
        throw ConfigError(path + ": not a stats JSON (" + e.what() + ")");
    }
    if (!stats.is_object() || !stats.contains("config") || !stats["config"].is_object() ||
        !stats.contains("testbench") || !stats["testbench"].is_string())
        throw ConfigError(path + ": not a stats JSON of `nctlm run` (no config and testbench)");
    YAML::Node doc(YAML::NodeType::Map);
    for (auto& [section, keys] : stats["config"].items()) {
        if (!keys.is_object())
            throw ConfigError(path + ": config." + section + " is not a map of keys");
        YAML::Node body(YAML::NodeType::Map);
        for (auto& [k, v] : keys.items())
            body[k] = yaml_text(v, path + ": config." + section + "." + k);
        doc[section] = body;
    }
    ReplayedRun out;
    out.tree.merge_document(doc, path);
    out.testbench = stats["testbench"].get<std::string>();
    if (stats.contains("program")) {
        if (!stats["program"].is_string())
            throw ConfigError(path + ": program is not a file name");
        out.program_file = stats["program"].get<std::string>();
    }
    return out;
}

LoadedRun load_run(const RunOptions& o) {
    LoadedRun r;
    r.testbench = o.testbench;
    if (!o.replay_file.empty()) {
        ReplayedRun replayed = replay_tree(o.replay_file);
        if (!r.testbench.empty() && r.testbench != replayed.testbench)
            throw ConfigError("--replay " + o.replay_file + ": that run was testbench '" + replayed.testbench +
                              "', not '" + r.testbench + "' (drop -t)");
        r.tree = std::move(replayed.tree);
        r.testbench = replayed.testbench;
        r.program_file = replayed.program_file;
    } else {
        std::string platform = resolve_config(o.platform_file, "platforms");
        r.tree = ConfigTree::from_file(platform);
        if (r.tree.root()["nctlm_version"] && r.tree.root()["config"])
            throw ConfigError(platform + ": a stats JSON of `nctlm run`, not a platform; replay it with "
                              "`nctlm run --replay " + platform + "`");
    }
    // A testbench that runs a program file (the kernel testbench) takes -w as that file; for the
    // others -w is a workload YAML merged into the configuration (which a replay already holds).
    const TestbenchInfo* program_tb = find_testbench(r.testbench);
    if (program_tb && !program_tb->program_workload)
        program_tb = nullptr;
    if (!o.workload_file.empty() && !program_tb) {
        if (!o.replay_file.empty())
            throw ConfigError("--replay " + o.replay_file + ": the stats JSON holds the whole configuration; drop -w "
                              "(change keys with --set)");
        r.tree.merge_file(resolve_config(o.workload_file, "workloads"));
    }
    for (auto& s : o.overrides)
        r.tree.set(s);
    r.cfg = PlatformConfig::load(r.tree);
    warn_unread_model_keys(r.tree, r.cfg, r.warnings);
    r.tb = make_testbench(r.testbench);
    if (program_tb && !o.workload_file.empty()) {
        // Absolute, so the stats JSON's `program` replays from any directory.
        std::string file = resolve_config(o.workload_file, program_tb->program_kind);
        std::error_code ec;
        fs::path absolute = fs::absolute(file, ec);
        r.program_file = ec ? file : absolute.lexically_normal().string();
    }
    if (program_tb && !r.program_file.empty())
        r.tb->set_program_file(r.program_file);
    // A testbench whose workload has required keys, run without one: say what to pass instead of
    // "missing key 'workload.m'".
    if (const TestbenchInfo* info = find_testbench(r.testbench); info && !r.tree.root()["workload"])
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
                if (w.rfind(r.testbench + "_", 0) == 0)
                    shipped += "\n  -w " + w;
            throw ConfigError("testbench '" + r.testbench + "' needs a workload: pass -w FILE" +
                              (shipped.empty() ? "" : " (shipped:" + shipped + ")") +
                              "\nor set its required keys with --set workload.KEY=VALUE (nctlm describe " +
                              r.testbench + ")");
        }
    r.tb->configure(r.tree);
    r.tree.check_sections(PlatformConfig::sections());
    r.tree.check_all_read("testbench '" + r.testbench + "'", "nctlm describe " + r.testbench + " lists what it reads");
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
    if (!o.trace_file.empty()) {
        trace().enable(o.trace_start_ns, o.trace_end_ns < 0 ? 1e300 : o.trace_end_ns, o.trace_max_events);
        // A trace past ~200 MB is slow to write and to open: say so while the run can still be stopped.
        trace().warn_above(trace_warn_bytes(), [](size_t estimate) {
            fmt::print(stderr, "warning: {}\n", large_trace_message(estimate, false));
        });
    }
    Platform top("top", cfg);
    tb->build(top);

    // The limit: sim.time_limit, or ten times the testbench's own duration if that is longer.
    double limit_ns = std::max(cfg.sim.time_limit.ns, 10 * tb->duration_ns());
    auto wall_start = std::chrono::steady_clock::now();
    bool over_limit = simulate(o.progress && isatty(fileno(stderr)), limit_ns);
    double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
    if (over_limit) {
        stop_every_thread();
        sim_error(fmt::format("simulated time passed the run's limit of {} with work still pending after {:.1f} s "
                              "of host time: some parameter makes this run far longer than intended (a rate or "
                              "latency far off?); if it is meant, raise sim.time_limit",
                              format_duration(Duration(limit_ns)), wall_s),
                  msg::kSim);
    }
    if (sc_core::sc_get_status() != sc_core::SC_STOPPED)
        sc_core::sc_stop();  // runs end_of_simulation() callbacks, which finalize stats

    RunOutcome out;
    out.warnings = loaded.warnings;
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
    out.report["testbench"] = loaded.testbench;
    if (!loaded.program_file.empty())
        out.report["program"] = loaded.program_file;  // what --replay runs again
    out.report["config"] = tree.effective();
    // A failed run's figures are not results: leave them out rather than report a wrong number.
    out.report["results"] =
        out.errors.empty() ? with_deprecated_aliases(on_fs_grid(tb->results())) : nlohmann::json(nullptr);
    out.report["stats"] = stats().to_json();
    // Simulated time, and the host time sc_start took; `simulated_ns` and `wall_s` are 0.2's names.
    out.report["sim"] = {{"sim_time_ns", now_ns()},
                         {"host_time_s", wall_s},
                         {"simulated_ns", now_ns()},
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
        if (trace().size_estimate() > trace_warn_bytes())
            out.warnings.push_back(large_trace_message(trace().size_estimate(), true));
        trace().write(o.trace_file);
        out.summary += fmt::format("\ntrace: {} events written to {}{}", trace().size(), o.trace_file,
                                   trace().dropped() ? fmt::format(" ({} dropped by the cap)", trace().dropped()) : "");
    }
    return out;
}

} // namespace nctlm
