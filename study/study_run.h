// What `nctlm sensitivity` and `nctlm uncertainty` share: the run being studied (platform,
// testbench, workload, --set), the parameters and figures chosen, and how the study's points run
// (the sweep's RunSettings). A study writes a sweep spec of labelled cases (`cases:`) into its
// output directory and runs it with run_sweep, so its points run in parallel, on Slurm, resume
// and report progress exactly as a sweep's do; then it reads the rows back.
#pragma once

#include "models/common/config.h"
#include "study/sweep_run.h"

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace nctlm::study {

// A figure in reports: 6 significant digits; a relative change as "+6.01 %" ("n/a" if not finite).
std::string num(double v);
std::string pct(double fraction);

using Cases = std::vector<std::pair<std::string, std::vector<std::string>>>;  // label -> section.key=value

struct StudyRun {
    std::string platform, testbench, workload;  // platform/workload: paths or shipped names
    std::vector<std::string> sets;              // section.key=value
    std::vector<std::string> params, figures;   // empty: the study's defaults
    sweep::RunSettings run;                     // out_dir, jobs, backend, resume, timeout, plot...

    // The run's effective configuration, validated as `nctlm run` would.
    ConfigTree load() const;
    // The fields named by `params` (checked: known, numeric), else those `pick` accepts.
    std::vector<FieldInfo> choose(bool (*pick)(const FieldInfo&)) const;
    // Writes the spec of `cases` (NAME.sweep.yaml in the output directory) and runs it. Returns the
    // sweep's exit status (3 when some point failed: a perturbation can make a configuration
    // invalid, which the study reports rather than stops on).
    int run_cases(const std::string& name, const Cases& cases, const std::string& note) const;
    // Runs the first case (the base) alone, checks `figures` against its results (ConfigError: an
    // unknown figure, or a failed base run), then all of `cases` reusing it. The sweep's exit status.
    int run_base_then(const Cases& cases, const std::string& name, const std::string& note) const;
    // The rows of the sweep, by case label (status, results).
    std::map<std::string, nlohmann::json> rows() const;
    // Runs scripts/SCRIPT once per argument list (the output file last in each, after -o), a few at
    // a time, unless run.plot is off; the files drawn (a missing script or a failed plot is said
    // on stderr, not an error: the numbers are written already).
    std::vector<std::string> draw(const std::string& script, const std::vector<std::vector<std::string>>& args) const;
    // Writes out_dir/file (atomically).
    void write(const std::string& file, const std::string& text) const;
    // "-p ... -t ... [-w ...] [--set ...]": the run, for reports.
    std::string run_line() const;
    std::string file(const std::string& name) const;  // out_dir/name

    // Numeric headline results of a row (flattened keys), in the order the testbench gives them.
    static std::vector<std::pair<std::string, double>> numbers(const nlohmann::json& row);
    static std::optional<double> figure(const nlohmann::json& row, const std::string& name);
};

} // namespace nctlm::study
