// A sweep point made runnable: validated in-process exactly as `nctlm run` would load it, named
// by the hash of its effective configuration (what --resume matches), with the command line
// that runs it as a child process.
#pragma once

#include "study/sweep_spec.h"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace nctlm::sweep {

struct Job {
    Point point;
    std::string hash;
    std::string effective_yaml;
    std::string error;  // non-empty: the configuration is invalid, nothing to run
};

// The same loading `nctlm run` does, without building anything: validates the point and gives
// the effective values (defaults filled in, units canonical) that name it.
Job prepare(const Spec& spec, const Point& point);

// `nctlm run -p ... -t ... [-w ...] [--set ...]... --stats-json STATS -q`, argv[0] "nctlm".
std::vector<std::string> run_argv(const Spec& spec, const Job& job, const std::string& stats_file);
// The same as one shell line, quoted where needed.
std::string command_line(const std::vector<std::string>& argv);
std::string shell_quote(const std::string& text);

// "dma.channels=4 testbench.n=16": a point's axis values on one line.
std::string axes_text(const KeyValues& axes);

// A row record before its point ran: {id, index, hash, status: pending, axes, ...} (see Table).
nlohmann::ordered_json base_row(const Job& job);

} // namespace nctlm::sweep
