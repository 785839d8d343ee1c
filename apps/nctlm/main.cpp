// nctlm: the command line. `nctlm run`, `nctlm validate`, `nctlm describe`.
// Exit status: 0 ok, 1 internal error, 2 bad configuration or usage, 3 simulation error.
// A library (nctlm::cli) so a user's own simulator can be a full nctlm CLI with its testbenches.
#include "apps/nctlm/calibrate.h"
#include "apps/nctlm/cli.h"
#include "apps/nctlm/cli_flags.h"
#include "apps/nctlm/sweep.h"
#include "models/common/atomic_file.h"
#include "models/common/config.h"
#include "models/common/errors.h"
#include "models/common/units.h"
#include "models/common/params.h"
#include "models/common/sim.h"
#include "models/common/version.h"
#include "models/graph/graph_schema.h"
#include "models/kernel/kernel_schema.h"
#include "platforms/platform.h"
#include "platforms/shipped_configs.h"
#include "platforms/platform_config.h"
#include "testbenches/runner.h"
#include "testbenches/testbench.h"

#include <boost/program_options.hpp>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <iostream>
#include <set>
#include <systemc>
#include <unistd.h>

namespace po = boost::program_options;
using namespace nctlm;

namespace {

constexpr int kOk = 0, kInternal = 1, kUsage = 2, kSimError = 3;

const char* kUsageText = R"(usage: nctlm <command> [options]

commands:
  run       --platform FILE --testbench NAME [--workload FILE] [--set section.key=value]...
            [--stats-json FILE] [--trace FILE [--trace-window START..END] [--trace-max-events N]]
  sweep     SPEC.yaml -o DIR [-j N] [--resume] [--backend local|slurm] [--dry-run] [--timeout S]
            | --collect DIR                                  design-space sweeps (docs/sweeps.md)
  sensitivity -p FILE -t NAME -o DIR [-w FILE] [--set k=v]... [-j N] [--backend local|slurm] [--resume]
            [--params k1,k2] [--step PCT | --range]      elasticity of each result to each parameter
  uncertainty -p FILE -t NAME -o DIR [-n N] [--seed S] ...   5-95 % intervals over the plausible ranges
            (docs/sensitivity.md)
  kernel    FILE.py::FN [--arg NAME=bf16[4096,8192]]... -p FILE [-o kernel.json] [--check REF.py::FN]
            [run options]      trace an NKI-style Python kernel and run it (docs/kernels.md)
  model     --hf-config CONFIG --phase prefill|decode --batch B (--seq S | --context C) [--tp N]
            [--chips C] [--layers L] [-o graph.json] [--run -p FILE [run options]]   a model step as an op graph
  import-onnx MODEL.onnx [-o graph.json] [--dim NAME=V]... [--run ...]  an ONNX model as an op graph
            (docs/models.md; run a graph with: nctlm run -t graph -w graph.json -p trn2)
  validate  [-p] FILE [-t NAME] [-w FILE] [--set section.key=value]...
            check everything a run would (with -t: the testbench too), print effective values
  calibrate flow -p FILE [--set k=v]... [-o FILE]   the flow mode's HBM table, from the banked model
  describe  [SECTION|TESTBENCH|all|--keys|--schema|kernel [--schema]|graph [--schema]] [--json]   parameter tables (markdown); no argument:
            the list of sections and testbenches
  testbenches                                                    list testbenches
  plot      DIR --x AXIS --y FIGURE [--hue AXIS] [-o FILE.png]   plot a sweep's results (scripts/plot)
  paths     [--configs|--scripts|--python]   where the shipped configs, run-time scripts and the
            Python package are (PYTHONPATH=$(nctlm paths --python))
  --version                                                      print the version

Platforms and workloads may be shipped names: -p trn1, -w gemm_32x3072x32.
run 'nctlm <command> --help' for the options of a command.
)";

std::pair<double, double> parse_window(const std::string& text) {
    auto dots = text.find("..");
    if (dots == std::string::npos)
        throw ConfigError("--trace-window " + text + ": expected START..END with units, e.g. 0 ns..5 us");
    std::string a = text.substr(0, dots), b = text.substr(dots + 2);
    try {
        double start = a.empty() ? 0 : parse_duration(a).ns;
        double end = b.empty() ? -1 : parse_duration(b).ns;
        if (end >= 0 && end <= start)
            throw ConfigError("--trace-window " + text + ": END must be after START");
        return {start, end};
    } catch (const UnitError& e) {
        throw ConfigError("--trace-window " + text + ": " + e.what());
    }
}

// --timing at|lt is --set sim.timing=..., applied last: it wins over any --set sim.timing.
void add_timing_override(const po::variables_map& vm, const std::string& timing, std::vector<std::string>& overrides) {
    if (!vm.count("timing"))
        return;
    if (timing != "at" && timing != "lt" && timing != "flow")
        throw ConfigError("--timing " + timing + ": expected at, lt or flow");
    overrides.push_back("sim.timing=" + timing);
}


int cmd_run(const std::vector<std::string>& args) {
    RunOptions o;
    std::string stats_file, window, max_events, max_memory, timing;
    bool quiet = false;
    po::options_description desc("nctlm run");
    desc.add_options()("help,h", "this help")                                                       //
        ("platform,p", po::value(&o.platform_file), "platform YAML or shipped name (trn1, trn2, tiny)")   //
        ("testbench,t", po::value(&o.testbench), "testbench name (see `nctlm testbenches`)")              //
        ("workload,w", po::value(&o.workload_file), "workload YAML or shipped name, merged over the platform")  //
        ("set,s", po::value(&o.overrides)->composing(), "override a key: section.key=value (repeatable)")    //
        ("replay", po::value(&o.replay_file), "re-run the effective config (and testbench) of a stats JSON")  //
        ("timing", po::value(&timing), "at | lt | flow: approximately or loosely timed, or flows (= --set sim.timing=...)")  //
        ("stats-json,o", po::value(&stats_file), "write config, results and stats as JSON (- for stdout)")  //
        ("trace", po::value(&o.trace_file), "write a Perfetto/Chrome trace-event JSON")                      //
        ("trace-window", po::value(&window), "only spans inside START..END (e.g. '0 ns..10 us')")             //
        ("trace-max-events", po::value(&max_events), "cap on trace spans, and on counter samples (default 2000000 each)")  //
        ("max-memory", po::value(&max_memory), "refuse a run estimated to need more (default: half the RAM)")  //
        ("progress", po::bool_switch(&o.progress), "print simulated time and speed while running (when stderr is a terminal)")  //
        ("quiet,q", po::bool_switch(&quiet), "no summary on stdout");
    po::variables_map vm;
    // No positional arguments: a stray word is a mistake, not something to ignore.
    po::store(po::command_line_parser(args).options(desc).positional(po::positional_options_description()).run(),
              vm);
    if (vm.count("help")) {
        std::cout << desc << "\n";
        return kOk;
    }
    po::notify(vm);
    if (o.replay_file.empty() && (o.platform_file.empty() || o.testbench.empty()))
        throw ConfigError(std::string("nctlm run: give ") + (o.platform_file.empty() ? "--platform (-p trn1)" : "") +
                          (o.platform_file.empty() && o.testbench.empty() ? " and " : "") +
                          (o.testbench.empty() ? "--testbench (-t probe)" : "") + ", or --replay STATS.json");
    if (!o.replay_file.empty() && !o.platform_file.empty())
        throw ConfigError("--replay " + o.replay_file + ": the stats JSON holds the whole configuration; drop -p "
                          "(change keys with --set)");
    if (!window.empty())
        std::tie(o.trace_start_ns, o.trace_end_ns) = parse_window(window);
    add_timing_override(vm, timing, o.overrides);
    if (!max_events.empty())
        o.trace_max_events = cli::count("--trace-max-events", max_events, 1, 1'000'000'000);
    if (!vm.count("max-memory")) {
        long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
        o.max_memory = pages > 0 && page > 0 ? uint64_t(pages) * uint64_t(page) / 2 : 0;
    } else {
        try {
            o.max_memory = parse_bytes(max_memory);
        } catch (const UnitError& e) {
            throw ConfigError("--max-memory '" + max_memory + "': " + e.what());
        }
    }
    bool stats_to_stdout = stats_file == "-";
    if (!stats_file.empty() && !stats_to_stdout)
        cli::check_output("--stats-json", stats_file);
    if (!o.trace_file.empty())
        cli::check_output("--trace", o.trace_file);

    o.warnings_are_errors = true;  // a CLI run with a SystemC warning is not a result to trust
    RunOutcome out = run(o);
    if (stats_to_stdout)
        std::cout << out.report.dump(2) << "\n" << std::flush;
    else if (!stats_file.empty())
        write_atomically(stats_file, out.report.dump(2) + "\n");
    for (auto& w : out.warnings)
        std::cerr << "warning: " << w << "\n";
    // A failed run has no figures to show: only its errors. With the stats on stdout, the summary
    // goes to stderr so stdout stays one JSON document.
    if (!quiet && out.errors.empty())
        (stats_to_stdout ? std::cerr : std::cout) << out.summary << "\n";
    for (auto& e : out.errors)
        std::cerr << "error: " << e << "\n";
    return out.errors.empty() ? kOk : kSimError;
}

} // namespace

int nctlm::run_command(const std::vector<std::string>& args) { return cmd_run(args); }

namespace {

int cmd_validate(const std::vector<std::string>& args) {
    RunOptions o;
    std::string timing;
    po::options_description desc("nctlm validate [FILE] (checks everything `nctlm run` with the same arguments would)");
    desc.add_options()("help,h", "this help")                                                           //
        ("platform,p", po::value(&o.platform_file), "platform YAML or shipped name (trn1, trn2, tiny)")  //
        ("testbench,t", po::value(&o.testbench), "also check this testbench's sections and build it")   //
        ("workload,w", po::value(&o.workload_file), "workload YAML or shipped name")                   //
        ("set,s", po::value(&o.overrides)->composing(), "override section.key=value")                 //
        ("timing", po::value(&timing), "at | lt | flow (= --set sim.timing=..., as for nctlm run)");
    po::positional_options_description pos;
    pos.add("platform", 1);
    po::variables_map vm;
    po::store(po::command_line_parser(args).options(desc).positional(pos).run(), vm);
    if (vm.count("help")) {
        std::cout << desc << "\n";
        return kOk;
    }
    po::notify(vm);
    add_timing_override(vm, timing, o.overrides);
    if (o.platform_file.empty())
        throw ConfigError("nctlm validate: give a platform (FILE or -p trn1)");
    std::string file = resolve_config(o.platform_file, "platforms");
    if (o.testbench.empty()) {
        ConfigTree tree = ConfigTree::from_file(file);
        if (!o.workload_file.empty())
            tree.merge_file(resolve_config(o.workload_file, "workloads"));
        for (auto& s : o.overrides)
            tree.set(s);
        PlatformConfig::load(tree);
        if (tree.root()["testbench"] || tree.root()["workload"])
            std::cerr << "note: testbench and workload sections depend on the testbench: add -t NAME to check them\n";
        tree.check_sections(PlatformConfig::sections());
        std::cout << "# " << file << ": valid. Effective values:\n" << tree.effective_yaml();
        return kOk;
    }
    // With a testbench: load exactly as a run does, then elaborate the platform and attach the
    // testbench (which checks what needs the built chip, e.g. a tile index) without simulating.
    LoadedRun r = load_run(o);
    init_kernel(true);
    Platform top("top", r.cfg);
    r.tb->build(top);
    std::cout << "# " << file << " + testbench " << o.testbench << ": valid. Effective values:\n"
              << r.tree.effective_yaml();
    return kOk;
}

// Every section a key can be set in: the platform's, then each testbench's.
std::vector<ParamSection> platform_sections() {
    return {param_section<ChipConfig>("platform", "the platform as a whole: tiles per chip, chips"),
            param_section<DmaConfig>("dma", "DMA engine of each tile"),
            param_section<NocConfig>("noc", "network on chip"),
            param_section<HbmConfig>("hbm", "HBM stacks and controllers"),
            param_section<LinkConfig>("link", "NeuronLink between chips (platform.chips > 1)"),
            param_section<PeConfig>("pe", "processing element of each tile"),
            param_section<HostConfig>("host", "host, PCIe and runtime"),
            param_section<SimConfig>("sim", "simulator switches: timing mode (at | lt | flow) and quantum")};
}

std::string describe_index() {
    std::string out = "platform sections (nctlm describe SECTION; any key settable with --set SECTION.KEY=VALUE):\n";
    for (auto& s : platform_sections())
        out += fmt::format("  {:<10} {}\n", s.section, s.what);
    out += "testbenches (nctlm describe NAME: the testbench.* and workload.* keys it reads):\n";
    for (auto& t : testbenches()) {
        std::string secs;
        for (auto& s : t.sections)
            secs += (secs.empty() ? "" : " ") + s.section + ".*";
        bool clash = false;  // a testbench named like a section is described as testbench:NAME
        for (auto& s : platform_sections())
            clash = clash || s.section == t.name;
        out += fmt::format("  {:<10} {:<22} {}\n", clash ? "testbench:" + t.name : t.name,
                           secs.empty() ? "(no keys)" : secs, t.doc);
    }
    out += "also: nctlm describe all | --keys | --schema\n";
    return out;
}

std::string unknown_section_or_testbench(const std::string& which) {
    std::vector<std::string> names;
    for (auto& s : platform_sections())
        names.push_back(s.section);
    for (auto& t : testbenches())
        names.push_back(t.name);
    std::string hint = did_you_mean(which, names);
    return "describe: unknown section or testbench '" + which + "'" +
           (hint.empty() ? "" : "; did you mean '" + hint + "'?");
}

// describe as JSON (for programs: the Python API's nctlm.describe): the index, or one section's or
// testbench's parameters with unit, default, range, meaning and, for platform keys, provenance.
nlohmann::ordered_json describe_json(const std::string& which) {
    using ojson = nlohmann::ordered_json;
    std::map<std::string, FieldInfo> infos;
    for (auto& f : PlatformConfig::field_infos())
        infos[f.name()] = f;
    auto section_json = [&](const ParamSection& s) {
        ojson params = ojson::array();
        for (auto& p : s.params()) {
            ojson j = {{"key", s.section + "." + p.key}, {"unit", p.unit},
                       {"default", p.default_text ? ojson(*p.default_text) : ojson(nullptr)},
                       {"required", !p.default_text}, {"range", p.range}, {"doc", p.doc}};
            if (auto it = infos.find(s.section + "." + p.key); it != infos.end()) {
                j["provenance"] = provenance_name(it->second.provenance);
                j["source"] = it->second.source;
                j["plausible"] = it->second.plausible;
            }
            params.push_back(j);
        }
        return ojson{{"section", s.section}, {"what", s.what}, {"params", params}};
    };
    if (which.empty()) {
        ojson out = {{"sections", ojson::array()}, {"testbenches", ojson::array()}};
        for (auto& s : platform_sections())
            out["sections"].push_back({{"name", s.section}, {"what", s.what}});
        for (auto& t : testbenches()) {
            ojson secs = ojson::array();
            for (auto& s : t.sections)
                secs.push_back(s.section);
            out["testbenches"].push_back({{"name", t.name}, {"doc", t.doc}, {"sections", secs}});
        }
        return out;
    }
    bool only_testbench = which.rfind("testbench:", 0) == 0;
    std::string name = only_testbench ? which.substr(10) : which;
    if (!only_testbench)
        for (auto& s : platform_sections())
            if (s.section == name)
                return section_json(s);
    if (const TestbenchInfo* t = find_testbench(name)) {
        ojson out = {{"testbench", t->name}, {"doc", t->doc}, {"sections", ojson::array()}};
        for (auto& s : t->sections)
            out["sections"].push_back(section_json(s));
        return out;
    }
    throw ConfigError(unknown_section_or_testbench(name));
}

int cmd_describe(std::vector<std::string> args) {
    if (auto json_flag = std::find(args.begin(), args.end(), "--json"); json_flag != args.end()) {
        args.erase(json_flag);
        if (args.size() > 1)
            throw ConfigError("usage: nctlm describe [SECTION|TESTBENCH] --json");
        std::cout << describe_json(args.empty() ? "" : args[0]).dump(1) << "\n";
        return kOk;
    }
    std::string which = args.empty() ? "" : args[0];
    if (which.empty() || which == "-h" || which == "--help") {
        std::cout << "usage: nctlm describe [SECTION|TESTBENCH|testbench:NAME|all|--keys|--schema] [--json]\n\n"
                  << describe_index();
        return kOk;
    }
    if (which == "--keys") {  // every key --set accepts, one per line (completion, tests)
        std::set<std::string> keys;
        for (auto& s : platform_sections())
            for (auto& p : s.params())
                keys.insert(s.section + "." + p.key);
        for (auto& t : testbenches())
            for (auto& s : t.sections)
                for (auto& p : s.params())
                    keys.insert(s.section + "." + p.key);
        for (auto& k : keys)
            std::cout << k << "\n";
        return kOk;
    }
    if (which == "--schema") {  // JSON Schema of a run's YAML (platform + testbench + workload)
        std::vector<ParamSection> all = platform_sections();
        for (auto& t : testbenches())
            for (auto& s : t.sections)
                all.push_back(s);
        std::cout << json_schema(all, "nctlm configuration (platform, testbench and workload files)").dump(2)
                  << "\n";
        return kOk;
    }
    if (which == "kernel" && args.size() > 1 && args[1] == "--schema") {  // the kernel program format
        std::cout << kernel::kernel_schema().dump(2) << "\n";
        return kOk;
    }
    if (which == "kernel")  // the testbench's keys below, the program format first
        std::cout << kernel::kernel_format_markdown() << "\n";
    if (which == "graph" && args.size() > 1 && args[1] == "--schema") {  // the op graph format
        std::cout << graph::graph_schema().dump(2) << "\n";
        return kOk;
    }
    if (which == "graph")
        std::cout << graph::graph_format_markdown() << "\n";
    // "host" is a section and a testbench: the section wins, "testbench:host" is the testbench.
    bool found = false, only_testbench = which.rfind("testbench:", 0) == 0;
    if (only_testbench)
        which = which.substr(10);
    for (auto& s : platform_sections())
        if (!only_testbench && (which == "all" || which == s.section)) {
            std::cout << "### " << s.section << "\n\n" << s.markdown() << "\n";
            found = true;
            if (which != "all" && find_testbench(which))
                std::cerr << "note: '" << which << "' is also a testbench: nctlm describe testbench:" << which << "\n";
        }
    for (auto& t : testbenches())
        if (which == "all" || (which == t.name && (only_testbench || !found))) {
            std::cout << "### " << t.name << "\n\n";
            if (t.sections.empty())
                std::cout << "(reads no testbench or workload keys)\n\n";
            for (auto& s : t.sections)
                std::cout << s.markdown() << "\n";
            found = true;
        }
    if (!found)
        throw ConfigError(unknown_section_or_testbench(which) + "\n\n" + describe_index());
    return kOk;
}

// `nctlm plot DIR --x ... --y ...`: the installed plot script (scripts/plot), found as the sweep
// finds it; every argument is passed on. The exit status is the script's.
int cmd_plot(const std::vector<std::string>& args) {
    std::string script = find_script("plot");
    if (script.empty())
        throw std::runtime_error("no plot script found (" + data_dirs().found_by + "; see `nctlm paths`)");
    std::error_code ec;
    std::string exe = std::filesystem::read_symlink("/proc/self/exe", ec).string();
    setenv("NCTLM_EXE", exe.c_str(), 1);  // axis labels from this executable's field lists
    std::vector<std::string> argv = {script};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> cargv;
    for (auto& a : argv)
        cargv.push_back(const_cast<char*>(a.c_str()));
    cargv.push_back(nullptr);
    std::cout.flush();
    execv(script.c_str(), cargv.data());
    throw std::runtime_error("cannot run " + script + ": " + std::strerror(errno));
}

// Where this binary finds its data (platforms/shipped_configs.h); one of them alone with a flag.
int cmd_paths(const std::vector<std::string>& args) {
    DataDirs d = data_dirs();
    if (args.size() > 1 || (args.size() == 1 && args[0] != "--configs" && args[0] != "--scripts" &&
                            args[0] != "--python"))
        throw ConfigError("usage: nctlm paths [--configs|--scripts|--python]");
    std::string which = args.empty() ? "" : args[0];
    if (!which.empty()) {
        const std::string& dir = which == "--configs" ? d.configs : which == "--scripts" ? d.scripts : d.python;
        if (dir.empty())
            throw ConfigError("nctlm paths: no data directory found for this binary (" + d.found_by +
                              "); set NCTLM_DATA_DIR or install nctlm (docs/library.md)");
        std::cout << dir << "\n";
        return kOk;
    }
    std::vector<std::string> configs = config_dirs();
    std::cout << fmt::format("found by  {}\nconfigs   {}\nscripts   {}\npython    {}\n", d.found_by, d.configs,
                             d.scripts, d.python);
    if (const char* env = std::getenv("NCTLM_DATA_DIR"))
        std::cout << "NCTLM_DATA_DIR " << env << " (configs and scripts searched there first)\n";
    return kOk;
}

} // namespace

int nctlm::cli_main(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.empty() || args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
        std::cout << kUsageText;
        return args.empty() ? kUsage : kOk;
    }
    if (args[0] == "--version" || args[0] == "version") {
        std::cout << "nctlm " << version() << "\n";
        return kOk;
    }
    std::string command = args[0];
    args.erase(args.begin());
    try {
        if (command == "run")
            return cmd_run(args);
        if (command == "validate")
            return cmd_validate(args);
        if (command == "kernel")
            return kernel_command(args);
        if (command == "model")
            return model_command(args);
        if (command == "import-onnx")
            return import_onnx_command(args);
        if (command == "sweep")
            return cmd_sweep(args);
        if (command == "sensitivity")
            return cmd_sensitivity(args);
        if (command == "uncertainty")
            return cmd_uncertainty(args);
        if (command == "describe")
            return cmd_describe(args);
        if (command == "calibrate")
            return cmd_calibrate(args);
        if (command == "paths")
            return cmd_paths(args);
        if (command == "plot")
            return cmd_plot(args);
        if (command == "testbenches") {
            for (auto& t : testbenches())
                std::cout << fmt::format("{:<10} {}\n", t.name, t.doc);
            return kOk;
        }
        std::cerr << "nctlm: unknown command '" << command << "'\n" << kUsageText;
        return kUsage;
    } catch (const ConfigError& e) {
        std::cerr << e.what() << "\n";
        return kUsage;
    } catch (const UnitError& e) {
        std::cerr << e.what() << "\n";
        return kUsage;
    } catch (const std::bad_alloc&) {
        std::cerr << "error: out of memory; make the run smaller (see --max-memory and docs/errors.md)\n";
        return kSimError;
    } catch (const SimulationError& e) {
        std::cerr << "error: " << e.what() << "\n";
        return kSimError;
    } catch (const po::error& e) {
        std::cerr << "nctlm " << command << ": " << e.what() << " (try --help)\n";
        return kUsage;
    } catch (const std::exception& e) {
        std::cerr << "nctlm: error: " << e.what() << "\n";
        return kInternal;
    }
}
