// Running a sweep spec end to end: validate every point in-process, reuse the rows --resume
// finds, run the rest locally (a process pool) or on Slurm, merge results.csv/jsonl, draw the
// plots. `nctlm sweep`, `nctlm sensitivity` and `nctlm uncertainty` all run through run_sweep,
// so they share its options, checks and exit codes (study/exit_status.h).
#pragma once

#include "study/sweep_spec.h"

#include <optional>
#include <string>
#include <vector>

namespace nctlm::sweep {

// How a sweep's points run: what the command-line flags of every study command set.
struct RunSettings {
    std::string out_dir;                   // required unless dry_run
    size_t jobs = 0;                       // points at once; 0: the number of cores
    std::string backend = "local";         // local | slurm
    bool resume = false;                   // reuse rows whose effective config matches
    bool dry_run = false;                  // list the points on stdout; run nothing
    bool plot = true;                      // draw the spec's plots at the end
    bool wait = true;                      // slurm: wait for the job (false: --collect later)
    std::optional<double> timeout_s;       // per point; overrides the spec's
    std::vector<std::string> sbatch_args;
    size_t slurm_tasks = 1000;
    size_t max_points = 100000;
    std::string slice;                     // "I/N": only those points, no merge (a Slurm task)
    bool prune = true;                     // remove point files of ids the spec does not have
};

// Exit status: 0 every point ok, 2 bad spec or settings, 3 some point failed/missing, 130 interrupted.
int run_sweep(const Spec& spec, const RunSettings& settings);

// Merges the rows already in `dir` (after a Slurm --no-wait run) and draws the plots.
int collect(const std::string& dir, bool plot);

} // namespace nctlm::sweep
