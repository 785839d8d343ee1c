#include "study/slurm_backend.h"

#include "models/common/atomic_file.h"
#include "models/common/config.h"
#include "study/local_pool.h"

#include <cstdio>
#include <cstdlib>
#include <fmt/format.h>
#include <iostream>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace fs = std::filesystem;

namespace nctlm::sweep {
namespace {

std::string capture(const std::string& command, int* rc = nullptr) {
    std::string out;
    FILE* p = popen(command.c_str(), "r");
    if (!p)
        throw std::runtime_error("cannot run " + command);
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0)
        out.append(buf, n);
    int status = pclose(p);
    if (rc)
        *rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return out;
}

bool on_path(const std::string& program) {
    int rc = 0;
    capture("command -v " + program + " >/dev/null 2>&1", &rc);
    return rc == 0;
}

size_t count_rows(const OutDir& out, const std::vector<Job>& jobs) {
    size_t n = 0;
    std::error_code ec;
    for (auto& j : jobs)
        n += fs::exists(out.row(j.point.id), ec);
    return n;
}

} // namespace

bool run_slurm(const Spec& spec, const std::vector<Job>& jobs, size_t todo, const SlurmOptions& o,
               const OutDir& out) {
    const std::vector<std::string>& sbatch_args = o.sbatch_args;
    const double timeout_s = o.timeout_s;
    const size_t max_points = o.max_points;
    const bool wait = o.wait;
    if (!on_path("sbatch") || !on_path("squeue"))
        throw ConfigError("--backend slurm: sbatch/squeue not found on PATH (scripts/slurm-local start "
                          "runs a cluster on this machine; see docs/sweeps.md)");
    // Every Slurm command is bounded: a dead controller must not hang the sweep.
    const std::string bound = on_path("timeout") ? "timeout 60 " : "";
    // A job submitted with no node up stays pending forever: refuse up front, with the states seen.
    if (on_path("sinfo")) {
        int src = 0;
        std::string states = capture(bound + "sinfo -h -o %T 2>&1", &src);
        if (src != 0)
            throw ConfigError("--backend slurm: sinfo failed (exit " + std::to_string(src) +
                              "; is slurmctld running?): " + states);
        bool live = false;
        for (const char* s : {"idle", "mix", "alloc", "comp", "plnd"})
            live = live || states.find(s) != std::string::npos;
        if (!live)
            throw ConfigError("--backend slurm: no Slurm node is up (sinfo node states: " +
                              (states.empty() ? std::string("none") : states.substr(0, states.find_last_not_of(" \n") + 1)) +
                              "); start one (scripts/slurm-local start) or use --backend local");
    }
    fs::create_directories(out.root / "slurm");
    size_t tasks = std::max<size_t>(1, std::min(o.tasks, jobs.size()));
    std::string exe = self_exe();
    fs::path script = out.root / "slurm" / "sweep.sbatch";
    std::string text = fmt::format(
        "#!/bin/bash\n"
        "# nctlm sweep {name}: task i of {tasks} runs the points whose index % {tasks} == i.\n"
        "#SBATCH --job-name=nctlm-{name}\n"
        "#SBATCH --output={dir}/slurm/%A_%a.out\n"
        "#SBATCH --array=0-{last}\n"
        "#SBATCH --cpus-per-task=1\n"
        "#SBATCH --ntasks=1\n"
        "exec {exe} sweep {spec} -o {dir} --slice \"$SLURM_ARRAY_TASK_ID/{tasks}\" -j 1 --resume --timeout {timeout} --max-points {max_points}\n",
        fmt::arg("name", spec.name), fmt::arg("tasks", tasks), fmt::arg("dir", shell_quote(out.root.string())),
        fmt::arg("last", tasks - 1), fmt::arg("exe", shell_quote(exe)), fmt::arg("spec", shell_quote(spec.file)),
        fmt::arg("timeout", timeout_s), fmt::arg("max_points", max_points));
    write_atomically(script, text);
    std::string cmd = bound + "sbatch --parsable";
    for (auto& a : sbatch_args)
        cmd += " " + shell_quote(a);
    if (const char* extra = std::getenv("NCTLM_SBATCH_ARGS"))
        cmd += std::string(" ") + extra;  // split by the shell on purpose: "--partition=x --account=y"
    cmd += " " + shell_quote(script.string()) + " 2>&1";
    int rc = 0;
    std::string reply = capture(cmd, &rc);
    if (rc != 0)
        throw std::runtime_error("sbatch failed (exit " + std::to_string(rc) + "): " + reply);
    std::string job_id = reply.substr(0, reply.find_first_of(";\n"));
    std::cerr << fmt::format("sweep {}: submitted Slurm array job {} ({} tasks, {} points to run)\n", spec.name,
                             job_id, tasks, todo);
    write_atomically(out.root / "slurm" / "job_id", job_id + "\n");
    if (!wait) {
        std::cerr << "sweep: not waiting; merge later with `nctlm sweep --collect " << out.root.string() << "`\n";
        return true;
    }
    bool tty = isatty(2);
    size_t last_count = size_t(-1);
    auto start = Clock::now(), last_progress = start;
    double pending_limit_s = 600;
    if (const char* env = std::getenv("NCTLM_SLURM_PENDING_S"))
        pending_limit_s = std::max(1.0, std::atof(env));
    while (true) {
        if (stop_requested()) {
            std::cerr << "\nsweep: interrupted; cancelling job " << job_id << "\n";
            capture("scancel " + shell_quote(job_id) + " 2>&1");
            return false;
        }
        int qrc = 0;
        std::string q = capture(bound + "squeue -h -j " + shell_quote(job_id) + " -o %T 2>/dev/null", &qrc);
        size_t n = count_rows(out, jobs);
        double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
        if (tty)
            std::cerr << fmt::format("\r[slurm job {}] {}/{} rows, {} elapsed\x1b[K", job_id, n, jobs.size(),
                                     hms(elapsed))
                      << std::flush;
        else if (n != last_count)
            std::cerr << fmt::format("[slurm job {}] {}/{} rows\n", job_id, n, jobs.size());
        bool all_pending = q.find("PENDING") != std::string::npos &&
                           q.find_first_not_of("PENDING \n") == std::string::npos;  // every task PENDING
        if (n != last_count || !all_pending)
            last_progress = Clock::now();
        last_count = n;
        // Gone from the queue (or unknown once purged): done.
        if (q.find_first_not_of(" \n") == std::string::npos)
            break;
        // Only pending and no row for too long: the cluster cannot run it (nodes went down).
        if (std::chrono::duration<double>(Clock::now() - last_progress).count() > pending_limit_s) {
            capture(bound + "scancel " + shell_quote(job_id) + " 2>&1");
            throw ConfigError(fmt::format("--backend slurm: job {} stayed pending for {:.0f} s with no node running "
                                          "it; cancelled (set NCTLM_SLURM_PENDING_S to wait longer)",
                                          job_id, pending_limit_s));
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
    if (tty)
        std::cerr << "\n";
    return true;
}

} // namespace nctlm::sweep
