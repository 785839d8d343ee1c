// nctlm: the command line. `nctlm run`, `nctlm validate`, `nctlm describe`.
// Exit status: 0 ok, 1 internal error, 2 bad configuration or usage, 3 simulation error.
#include "apps/nctlm/sweep.h"
#include "models/common/config.h"
#include "models/common/units.h"
#include "platforms/platform_config.h"
#include "testbenches/runner.h"
#include "testbenches/testbench.h"

#include <boost/program_options.hpp>
#include <fmt/format.h>
#include <fstream>
#include <iostream>
#include <systemc>

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
  validate  FILE [--workload FILE] [--set section.key=value]...   check a config, print effective values
  describe  [SECTION]                                            parameter tables (markdown)
  testbenches                                                    list testbenches

run 'nctlm <command> --help' for the options of a command.
)";

std::pair<double, double> parse_window(const std::string& text) {
    auto dots = text.find("..");
    if (dots == std::string::npos)
        throw ConfigError("--trace-window " + text + ": expected START..END with units, e.g. 0 ns..5 us");
    std::string a = text.substr(0, dots), b = text.substr(dots + 2);
    double start = a.empty() ? 0 : parse_duration(a).ns;
    double end = b.empty() ? -1 : parse_duration(b).ns;
    return {start, end};
}

int cmd_run(const std::vector<std::string>& args) {
    RunOptions o;
    std::string stats_file, window;
    bool quiet = false;
    po::options_description desc("nctlm run");
    desc.add_options()("help,h", "this help")                                                       //
        ("platform,p", po::value(&o.platform_file)->required(), "platform YAML (configs/platforms/trn1.yaml)")  //
        ("testbench,t", po::value(&o.testbench)->required(), "testbench name (see `nctlm testbenches`)")      //
        ("workload,w", po::value(&o.workload_file), "workload YAML merged over the platform")                //
        ("set,s", po::value(&o.overrides)->composing(), "override a key: section.key=value (repeatable)")    //
        ("stats-json,o", po::value(&stats_file), "write config, results and stats as JSON")                  //
        ("trace", po::value(&o.trace_file), "write a Perfetto/Chrome trace-event JSON")                      //
        ("trace-window", po::value(&window), "only spans inside START..END (e.g. '0 ns..10 us')")             //
        ("trace-max-events", po::value(&o.trace_max_events), "cap on trace events (default 2000000)")        //
        ("progress", po::bool_switch(&o.progress), "print simulated time and speed while running")           //
        ("quiet,q", po::bool_switch(&quiet), "no summary on stdout");
    po::variables_map vm;
    po::store(po::command_line_parser(args).options(desc).run(), vm);
    if (vm.count("help")) {
        std::cout << desc << "\n";
        return kOk;
    }
    po::notify(vm);
    if (!window.empty())
        std::tie(o.trace_start_ns, o.trace_end_ns) = parse_window(window);

    RunOutcome out = run(o);
    if (!stats_file.empty()) {
        std::ofstream f(stats_file);
        f << out.report.dump(2) << "\n";
        if (!f)
            throw std::runtime_error("cannot write " + stats_file);
    }
    if (!quiet)
        std::cout << out.summary << "\n";
    for (auto& e : out.errors)
        std::cerr << "error: " << e << "\n";
    return out.errors.empty() ? kOk : kSimError;
}

int cmd_validate(const std::vector<std::string>& args) {
    std::string file, workload;
    std::vector<std::string> sets;
    po::options_description desc("nctlm validate");
    desc.add_options()("help,h", "this help")("file", po::value(&file)->required(), "platform YAML")  //
        ("workload,w", po::value(&workload), "workload YAML")                                        //
        ("set,s", po::value(&sets)->composing(), "override section.key=value");
    po::positional_options_description pos;
    pos.add("file", 1);
    po::variables_map vm;
    po::store(po::command_line_parser(args).options(desc).positional(pos).run(), vm);
    if (vm.count("help")) {
        std::cout << desc << "\n";
        return kOk;
    }
    po::notify(vm);
    ConfigTree tree = ConfigTree::from_file(file);
    if (!workload.empty())
        tree.merge_file(workload);
    for (auto& s : sets)
        tree.set(s);
    PlatformConfig::load(tree);
    if (tree.root()["testbench"] || tree.root()["workload"])
        std::cerr << "note: testbench and workload sections are checked by `nctlm run` (they depend on the testbench)\n";
    tree.check_sections(PlatformConfig::sections());
    std::cout << "# " << file << ": valid. Effective values:\n" << tree.effective_yaml();
    return kOk;
}

int cmd_describe(const std::vector<std::string>& args) {
    std::string which = args.empty() ? "" : args[0];
    struct Section {
        const char* name;
        std::string (*table)(const std::string&);
    };
    const Section sections[] = {{"platform", &describe<ChipConfig>},
                                {"dma", &describe<DmaConfig>},
                                {"noc", &describe<NocConfig>},
                                {"hbm", &describe<HbmConfig>},
                                {"pe", &describe<PeConfig>},
                                {"host", &describe<HostConfig>}};
    bool found = false;
    for (auto& s : sections)
        if (which.empty() || which == s.name) {
            std::cout << "### " << s.name << "\n\n" << s.table(s.name) << "\n";
            found = true;
        }
    if (!found)
        throw ConfigError("describe: unknown section '" + which + "'");
    return kOk;
}

} // namespace

int sc_main(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.empty() || args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
        std::cout << kUsageText;
        return args.empty() ? kUsage : kOk;
    }
    std::string command = args[0];
    args.erase(args.begin());
    try {
        if (command == "run")
            return cmd_run(args);
        if (command == "validate")
            return cmd_validate(args);
        if (command == "sweep")
            return cmd_sweep(args);
        if (command == "sensitivity")
            return cmd_sensitivity(args);
        if (command == "uncertainty")
            return cmd_uncertainty(args);
        if (command == "describe")
            return cmd_describe(args);
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
    } catch (const po::error& e) {
        std::cerr << "nctlm " << command << ": " << e.what() << " (try --help)\n";
        return kUsage;
    } catch (const std::exception& e) {
        std::cerr << "nctlm: error: " << e.what() << "\n";
        return kInternal;
    }
}
