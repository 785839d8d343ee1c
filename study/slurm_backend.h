// `--backend slurm`: one array job whose task i runs `<exe> sweep SPEC -o DIR --slice i/T`
// (each task a local pool of one, writing rows/ into the shared directory), then waits for it.
#pragma once

#include "study/sweep_output.h"

#include <string>
#include <vector>

namespace nctlm::sweep {

struct SlurmOptions {
    size_t tasks = 1000;                    // array tasks (at most one per point)
    double timeout_s = 3600;                // per point, passed to the tasks
    std::vector<std::string> sbatch_args;   // extra sbatch arguments
    bool wait = true;                       // false: submit and return (--collect later)
    size_t max_points = 100000;
};

// Submits the job (refusing up front when no node is up) and, with `wait`, polls squeue until it
// is gone. `todo`: points still to run, for the message. Returns false if interrupted.
// Throws ConfigError when Slurm is missing, down, or the job stays pending with no node.
bool run_slurm(const Spec& spec, const std::vector<Job>& jobs, size_t todo, const SlurmOptions& options,
               const OutDir& out);

} // namespace nctlm::sweep
