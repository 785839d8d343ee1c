// One simulation run, as `nctlm run` does it: load config, build the platform, attach the
// testbench, simulate, collect results. SystemC elaborates once per process: call run() once.
#pragma once

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
    uint64_t max_memory = 0;              // bytes; 0: no limit. Estimate checked before running
};

struct RunOutcome {
    nlohmann::json report;                // {platform, config, results, stats, sim}
    std::string summary;                  // human lines
    std::vector<std::string> errors;      // simulation errors (address, deadlock); empty if clean
};

// Throws ConfigError for a bad configuration (exit code 2 in the CLI).
RunOutcome run(const RunOptions& options);

} // namespace nctlm
