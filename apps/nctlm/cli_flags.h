// Flags shared by the CLI's commands, parsed and checked in one place: `sweep`, `sensitivity` and
// `uncertainty` take the same run flags (-o, -j, --backend, --resume, --timeout, ...) with the same
// checks and messages, and every count is read as a whole number in range (never wrapped).
#pragma once

#include "models/common/config.h"
#include "study/sweep_run.h"

#include <boost/program_options.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nctlm::cli {

// A whole number for a flag, in [lo, hi]: "-1" must not wrap to 2^64 - 1. Throws ConfigError.
uint64_t count(const std::string& flag, const std::string& text, uint64_t lo, uint64_t hi);

// A bad output path is a usage error found before the work starts (ConfigError naming the flag);
// the file itself is written atomically once the work is done, so a killed run leaves no empty
// file and the old one whole.
void check_output(const std::string& flag, const std::string& path);

// Parses args into desc's bound variables (no positional arguments unless `positional` is given);
// false after printing --help.
bool parse_or_help(const boost::program_options::options_description& desc, const std::vector<std::string>& args,
                   const boost::program_options::positional_options_description* positional = nullptr);

// The platform a command's `nctlm run` options name (-p/--platform), with their --set overrides
// applied; nullopt when no -p is given. Throws ConfigError for a platform that does not load.
std::optional<ConfigTree> platform_of_run(const std::vector<std::string>& run_options);

// How points run, as flags: -o, -j, --backend, --resume, --timeout, --no-plot, Slurm's.
struct RunFlags {
    std::string out_dir, jobs, backend = "local", timeout, slurm_tasks, max_points;
    bool resume = false, no_plot = false, no_wait = false;
    std::vector<std::string> sbatch_args;

    void add_to(boost::program_options::options_description& desc, bool output_required);
    // The checked settings (ConfigError naming the flag); -o must be a directory or creatable.
    sweep::RunSettings settings() const;
};

} // namespace nctlm::cli
