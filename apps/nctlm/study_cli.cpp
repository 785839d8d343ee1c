// `nctlm sweep`, `nctlm sensitivity`, `nctlm uncertainty`: flags to settings; the work is the study
// library's (study/sweep_run.h, study/studies.h).
#include "apps/nctlm/cli_flags.h"
#include "apps/nctlm/sweep.h"
#include "models/common/config.h"
#include "platforms/shipped_configs.h"
#include "study/exit_status.h"
#include "study/studies.h"
#include "study/sweep_run.h"

#include <sstream>

namespace po = boost::program_options;

namespace nctlm {
namespace {

std::vector<std::string> split_list(const std::string& flag, const std::string& text) {
    std::vector<std::string> out;
    std::stringstream ss(text);
    for (std::string item; std::getline(ss, item, ',');) {
        item.erase(0, item.find_first_not_of(' '));
        item.erase(item.find_last_not_of(' ') + 1);
        if (!item.empty())
            out.push_back(item);
    }
    if (out.empty())
        throw ConfigError(flag + " '" + text + "': an empty list; name at least one (or leave the flag out for the "
                          "default)");
    return out;
}

// The run a study varies, and its choice of parameters and figures.
struct StudyFlags {
    std::string platform, testbench, workload, params, figures;
    std::vector<std::string> sets;
    bool params_given = false, figures_given = false;
    cli::RunFlags run;

    void add_to(po::options_description& d) {
        d.add_options()("platform,p", po::value(&platform)->required(), "platform YAML or shipped name (trn1)")  //
            ("testbench,t", po::value(&testbench)->required(), "testbench name")                                //
            ("workload,w", po::value(&workload), "workload YAML or shipped name, merged over the platform")     //
            ("set,s", po::value(&sets)->composing(), "override section.key=value (repeatable)")                   //
            ("params", po::value(&params)->notifier([this](const std::string&) { params_given = true; }),
             "comma-separated parameters (section.key) to vary; default: see --help text")  //
            ("figures", po::value(&figures)->notifier([this](const std::string&) { figures_given = true; }),
             "comma-separated headline results to report (default: every numeric one that moves)");
        run.add_to(d, true);
    }
    study::StudyRun study() const {
        study::StudyRun s;
        s.platform = platform;
        s.testbench = testbench;
        s.workload = workload;
        s.sets = sets;
        if (params_given)
            s.params = split_list("--params", params);
        if (figures_given)
            s.figures = split_list("--figures", figures);
        s.run = run.settings();
        return s;
    }
};

} // namespace

int cmd_sweep(const std::vector<std::string>& args) {
    std::string spec_file, collect_dir, slice;
    bool dry_run = false;
    cli::RunFlags flags;
    po::options_description desc("nctlm sweep SPEC.yaml -o DIR");
    desc.add_options()("help,h", "this help")                                                      //
        ("spec", po::value(&spec_file), "sweep spec YAML (configs/sweeps/*.yaml, or a shipped name)")  //
        ("dry-run,n", po::bool_switch(&dry_run), "list the points and their settings; run nothing")  //
        ("collect", po::value(&collect_dir), "merge the rows in DIR into results.csv/jsonl (after Slurm)")  //
        ("slice", po::value(&slice), "I/N: run only points with index % N == I, no merge (Slurm tasks)");
    flags.add_to(desc, false);
    po::positional_options_description pos;
    pos.add("spec", 1);
    if (!cli::parse_or_help(desc, args, &pos))
        return kExitOk;
    sweep::RunSettings settings = flags.settings();
    if (!collect_dir.empty())
        return sweep::collect(collect_dir, settings.plot);
    if (spec_file.empty())
        throw ConfigError("nctlm sweep: give a spec file (nctlm sweep SPEC.yaml -o DIR)");
    settings.dry_run = dry_run;
    settings.slice = slice;
    return sweep::run_sweep(sweep::Spec::load(resolve_config(spec_file, "sweeps")), settings);
}

int cmd_sensitivity(const std::vector<std::string>& args) {
    StudyFlags flags;
    std::string step, top;
    bool use_range = false;
    po::options_description desc(
        "nctlm sensitivity -p PLATFORM -t TESTBENCH -o DIR: one-at-a-time sensitivity of each headline result\n"
        "(default parameters: every rate, clock, latency and cycle count of the platform; structural counts\n"
        "and sizes only with --params)");
    desc.add_options()("help,h", "this help");
    flags.add_to(desc);
    desc.add_options()("step", po::value(&step), "perturbation up and down in percent (default 10)")  //
        ("range", po::bool_switch(&use_range), "perturb calibrated/assumed parameters to the ends of their "
                                               "plausible range instead of +-step (ranked by swing)")  //
        ("top", po::value(&top), "rows per figure on stdout (default 12)");
    if (!cli::parse_or_help(desc, args))
        return kExitOk;
    study::SensitivityOptions o;
    o.use_range = use_range;
    if (!step.empty()) {
        try {
            o.step_pct = detail::parse_real(step);
        } catch (const UnitError& e) {
            throw ConfigError("--step " + step + ": " + e.what());
        }
        if (!(o.step_pct > 0 && o.step_pct < 100))
            throw ConfigError("--step " + step + ": expected a percentage in (0, 100)");
    }
    if (!top.empty())
        o.top = cli::count("--top", top, 1, 100000);
    return study::run_sensitivity(flags.study(), o);
}

int cmd_uncertainty(const std::vector<std::string>& args) {
    StudyFlags flags;
    std::string samples, seed;
    po::options_description desc(
        "nctlm uncertainty -p PLATFORM -t TESTBENCH -o DIR: Latin hypercube over the calibrated/assumed\n"
        "parameters within their plausible ranges; median and 5-95 % interval of each headline result");
    desc.add_options()("help,h", "this help");
    flags.add_to(desc);
    desc.add_options()("samples,n", po::value(&samples), "runs, 2..100000 (default 32)")  //
        ("seed", po::value(&seed), "sampling seed, 0..2^64-1 (default 1): the same seed gives the same runs");
    if (!cli::parse_or_help(desc, args))
        return kExitOk;
    study::UncertaintyOptions o;
    if (!samples.empty())
        o.samples = cli::count("--samples", samples, 2, 100000);
    if (!seed.empty())
        o.seed = cli::count("--seed", seed, 0, UINT64_MAX);
    return study::run_uncertainty(flags.study(), o);
}

} // namespace nctlm
