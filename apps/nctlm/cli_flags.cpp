#include "apps/nctlm/cli_flags.h"

#include "models/common/atomic_file.h"
#include "models/common/config.h"
#include "platforms/shipped_configs.h"
#include "study/sweep_spec.h"

#include <filesystem>
#include <iostream>

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace nctlm::cli {

void check_output(const std::string& flag, const std::string& path) {
    try {
        check_writable(path);
    } catch (const std::runtime_error& e) {
        throw ConfigError(flag + " " + path + ": " + e.what());
    }
}

std::optional<ConfigTree> platform_of_run(const std::vector<std::string>& run_options) {
    std::string platform;
    std::vector<std::string> sets;
    for (size_t i = 0; i + 1 < run_options.size(); ++i) {
        if (run_options[i] == "-p" || run_options[i] == "--platform")
            platform = run_options[i + 1];
        if (run_options[i] == "-s" || run_options[i] == "--set")
            sets.push_back(run_options[i + 1]);
    }
    if (platform.empty())
        return std::nullopt;
    ConfigTree tree = ConfigTree::from_file(find_config(platform, "platforms"));
    for (auto& a : sets)
        tree.set(a);
    return tree;
}

uint64_t count(const std::string& flag, const std::string& text, uint64_t lo, uint64_t hi) {
    try {
        uint64_t v = detail::parse_count(text);
        if (v < lo || v > hi)
            throw UnitError(std::to_string(v) + " is out of range [" + std::to_string(lo) + " .. " +
                            std::to_string(hi) + "]");
        return v;
    } catch (const UnitError& e) {
        throw ConfigError(flag + " " + text + ": " + e.what());
    }
}

bool parse_or_help(const po::options_description& desc, const std::vector<std::string>& args,
                   const po::positional_options_description* positional) {
    po::positional_options_description none;
    po::variables_map vm;
    po::store(po::command_line_parser(args).options(desc).positional(positional ? *positional : none).run(), vm);
    if (vm.count("help")) {
        std::cout << desc << "\n";
        return false;
    }
    po::notify(vm);
    return true;
}

void RunFlags::add_to(po::options_description& desc, bool output_required) {
    auto out = po::value(&out_dir);
    if (output_required)
        out->required();
    desc.add_options()("output,o", out, "output directory (results.csv, results.jsonl, points/, plots)")  //
        ("jobs,j", po::value(&jobs), "points run at once, 1..4096 (default: the number of cores)")            //
        ("backend", po::value(&backend), "local (default) or slurm (one sbatch --array job)")                //
        ("resume", po::bool_switch(&resume), "reuse the points of DIR whose effective config is unchanged")  //
        ("timeout", po::value(&timeout), "per-point timeout: seconds or a duration (600, 10 min = 600 s)")    //
        ("no-plot", po::bool_switch(&no_plot), "draw no PNG")                                              //
        ("sbatch-arg", po::value(&sbatch_args)->composing(), "extra sbatch argument, e.g. --partition=cpu (repeatable)")  //
        ("slurm-tasks", po::value(&slurm_tasks), "array tasks for --backend slurm (default: one per point, <= 1000)")  //
        ("no-wait", po::bool_switch(&no_wait), "--backend slurm: submit and return; --collect later")         //
        ("max-points", po::value(&max_points), "refuse a sweep with more points than this (default 100000)");
}

sweep::RunSettings RunFlags::settings() const {
    sweep::RunSettings s;
    s.out_dir = out_dir;
    if (!jobs.empty())
        s.jobs = count("--jobs", jobs, 1, 4096);
    if (backend != "local" && backend != "slurm")
        throw ConfigError("--backend " + backend + ": expected local or slurm");
    s.backend = backend;
    s.resume = resume;
    s.plot = !no_plot;
    s.wait = !no_wait;
    s.sbatch_args = sbatch_args;
    if (!timeout.empty()) {
        try {
            s.timeout_s = sweep::parse_timeout_seconds(timeout);
        } catch (const UnitError& e) {
            throw ConfigError("--timeout " + timeout + ": " + e.what());
        }
    }
    if (!slurm_tasks.empty())
        s.slurm_tasks = count("--slurm-tasks", slurm_tasks, 1, 1000000);
    if (!max_points.empty())
        s.max_points = count("--max-points", max_points, 1, 1000000000);
    if (!out_dir.empty()) {
        std::error_code ec;
        if (out_dir.find_first_not_of(' ') == std::string::npos)
            throw ConfigError("-o '" + out_dir + "': give a directory for the results");
        if (fs::exists(out_dir, ec) && !fs::is_directory(out_dir, ec))
            throw ConfigError("-o " + out_dir + ": exists and is not a directory; give a directory for the results");
    }
    return s;
}

} // namespace nctlm::cli
