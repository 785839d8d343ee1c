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
    std::string platform_file;
    std::string testbench;
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
};

class Testbench;
// Everything a run reads, loaded and checked, before any module exists. The platform and
// workload may be paths or shipped names ("trn1", "gemm_32x3072x32"). Throws ConfigError.
struct LoadedRun {
    ConfigTree tree;
    PlatformConfig cfg;
    std::unique_ptr<Testbench> tb;
    LoadedRun();
    LoadedRun(LoadedRun&&);
    ~LoadedRun();
};
LoadedRun load_run(const RunOptions& options);

// Throws ConfigError for a bad configuration (exit code 2 in the CLI).
RunOutcome run(const RunOptions& options);

} // namespace nctlm
