// One simulation run, as `nctlm run` does it: load config, build the platform, attach the
// testbench, simulate, collect results. SystemC elaborates once per process: call run() once.
#pragma once

#include "models/common/config.h"
#include "platforms/platform_config.h"

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace nctlm {

struct RunOptions {
    std::string platform_file;            // a path or a shipped name (trn1)
    std::string testbench;                // with replay_file: optional, must match the replayed one
    std::string replay_file;              // a stats JSON: its effective config replaces platform and workload
    std::string workload_file;            // optional
    std::vector<std::string> overrides;   // "section.key=value"
    std::string trace_file;               // optional Perfetto trace
    double trace_start_ns = 0, trace_end_ns = -1;
    size_t trace_max_events = 2'000'000;
    bool progress = false;                // print simulated time and events/s to stderr
    bool warnings_are_errors = false;     // SC_REPORT_WARNING throws (the CLI sets this)
    uint64_t max_memory = 0;              // bytes; 0: no limit. Estimate checked before running
};

struct RunOutcome {
    nlohmann::json report;                // {platform, config, results, stats, sim}
    std::string summary;                  // human lines
    std::vector<std::string> errors;      // simulation errors (address, deadlock); empty if clean
    std::vector<std::string> warnings;    // e.g. a --set key the chosen model does not read
};

class Testbench;
// Everything a run reads, loaded and checked, before any module exists. The platform and
// workload may be paths or shipped names ("trn1", "gemm_32x3072x32"). Every section given must
// be read by someone: a workload for a testbench that reads none is refused. Throws ConfigError.
// `nctlm run`, `validate -t`, every sweep point and every study load through this.
struct LoadedRun {
    std::string testbench;                // as named, or as the replayed stats JSON says
    std::string program_file;             // a program testbench's program (-w, or the replayed run's)
    std::vector<std::string> warnings;
    ConfigTree tree;
    PlatformConfig cfg;
    std::unique_ptr<Testbench> tb;
    LoadedRun();
    LoadedRun(LoadedRun&&);
    ~LoadedRun();
};
LoadedRun load_run(const RunOptions& options);

// What --replay runs: the tree a stats JSON's `config` describes, the testbench it ran and, for a
// program testbench (kernel), the program file it ran ("" if none).
struct ReplayedRun {
    ConfigTree tree;
    std::string testbench;
    std::string program_file;
};
ReplayedRun replay_tree(const std::string& stats_json);

// Throws ConfigError for a bad configuration (exit code 2 in the CLI).
RunOutcome run(const RunOptions& options);

} // namespace nctlm
