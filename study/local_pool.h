// Points run as child processes of this same executable (SystemC elaborates once per process),
// a few at a time, each with a timeout, in its own process group; an interrupt (SIGINT/SIGTERM)
// kills the running points and leaves the finished rows. Also the small helper that runs a list
// of commands (plots) with a bounded number at once.
#pragma once

#include "study/sweep_output.h"

#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace nctlm::sweep {

using Clock = std::chrono::steady_clock;

// The running executable (/proc/self/exe).
std::string self_exe();
// "1:02:03" or "2:03".
std::string hms(double seconds);

// SIGINT and SIGTERM set a flag the pool and the Slurm wait poll, instead of killing the sweep.
void catch_stop_signals();
bool stop_requested();

// Runs every command (argv[0] a path), at most `workers` at a time; their exit codes, in order.
std::vector<int> run_all(const std::vector<std::vector<std::string>>& commands, size_t workers);

// A progress bar on a terminal, one line per finished point otherwise.
class Progress {
public:
    Progress(size_t total, size_t skipped);
    void finished(const nlohmann::ordered_json& row, double seconds);
    double redraw_every_s() const { return tty_ ? 0.2 : 1.0; }  // how long the pool may sleep
    void tick(size_t running);
    void end();

private:
    void draw();
    size_t total_, done_, skipped_, failed_ = 0, running_ = 0;
    bool tty_;
    Clock::time_point start_ = Clock::now(), last_{};
};

// Runs `todo` with up to `workers` children, each killed after `timeout_s`. Each finished point's
// row goes to rows/ (and `on_row`); an invalid point gets an `invalid` row without running.
// Returns false if interrupted.
bool run_local(const Spec& spec, const std::vector<const Job*>& todo, size_t workers, double timeout_s,
               const OutDir& out, Progress& progress, const std::function<void(const nlohmann::ordered_json&)>& on_row);

} // namespace nctlm::sweep
