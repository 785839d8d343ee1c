// Helpers for the sweep tests: temp dirs, files, results.jsonl rows, the CLI in the background.
#pragma once

#include "tests/support.h"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <vector>

namespace nctlm::test {

inline std::string temp_dir() {
    char pattern[] = "/tmp/nctlm-sweep-test-XXXXXX";
    if (!mkdtemp(pattern))
        std::abort();
    return pattern;
}

inline std::string read_file(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

inline void write_file(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

// results.jsonl as a list of rows.
inline std::vector<nlohmann::json> rows(const std::string& dir) {
    std::vector<nlohmann::json> out;
    std::istringstream in(read_file(dir + "/results.jsonl"));
    for (std::string line; std::getline(in, line);)
        if (!line.empty())
            out.push_back(nlohmann::json::parse(line));
    return out;
}

// A row without the columns that measure the host rather than the model.
inline nlohmann::json model_columns(nlohmann::json row) {
    for (const char* k : {"host_time_s", "point_host_time_s", "sim_wall_s", "point_wall_s", "error"})
        row.erase(k);
    return row;
}

// A shell command line, its exit code and output (like run_cli, without the nctlm in front).
inline CliResult run_shell(const std::string& command) {
    std::string out = temp_file("", ".out"), err = temp_file("", ".err");
    int status = std::system((command + " >" + out + " 2>" + err).c_str());
    CliResult r{WIFEXITED(status) ? WEXITSTATUS(status) : 128, read_file(out), read_file(err)};
    std::remove(out.c_str());
    std::remove(err.c_str());
    return r;
}

} // namespace nctlm::test
