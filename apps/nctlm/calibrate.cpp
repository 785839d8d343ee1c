#include "apps/nctlm/calibrate.h"
#include "apps/nctlm/cli_flags.h"

#include "models/common/atomic_file.h"
#include "models/common/config.h"
#include "models/flow/flow_table.h"
#include "platforms/flow_tables.h"
#include "platforms/platform_config.h"
#include "platforms/shipped_configs.h"

#include <boost/program_options.hpp>
#include <chrono>
#include <filesystem>
#include <fmt/format.h>
#include <iostream>

namespace po = boost::program_options;

namespace nctlm {

int cmd_calibrate(const std::vector<std::string>& args) {
    std::string what, platform, out;
    std::vector<std::string> sets;
    po::options_description desc(
        "nctlm calibrate flow -p PLATFORM [--set section.key=value]... [-o FILE]\n"
        "Measures one HBM pseudo-channel of the banked model (sustained bandwidth and read latency by request\n"
        "size, pattern, read fraction and requests outstanding) for the flow mode (sim.timing: flow).\n"
        "Without -o the table goes to the cache the flow mode reads (flow-<hash of the hbm section>.json)");
    desc.add_options()("help,h", "this help")                                              //
        ("what", po::value(&what), "what to calibrate: flow")                              //
        ("platform,p", po::value(&platform)->required(), "platform YAML or shipped name")  //
        ("set,s", po::value(&sets)->composing(), "override section.key=value (repeatable)")  //
        ("output,o", po::value(&out), "write the table here (JSON)");
    po::positional_options_description pos;
    pos.add("what", 1);
    po::variables_map vm;
    po::store(po::command_line_parser(args).options(desc).positional(pos).run(), vm);
    if (vm.count("help")) {
        std::cout << desc << "\n";
        return 0;
    }
    po::notify(vm);
    if (what != "flow")
        throw ConfigError("nctlm calibrate: expected `nctlm calibrate flow -p PLATFORM` (got '" + what + "')");
    ConfigTree tree = ConfigTree::from_file(find_config(platform, "platforms"));
    for (auto& s : sets)
        tree.set(s);
    PlatformConfig cfg = PlatformConfig::load(tree);
    if (!out.empty())
        cli::check_output("-o", out);
    auto start = std::chrono::steady_clock::now();
    flow::FlowTable table = flow::FlowTable::calibrate(cfg.hbm);
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (out.empty()) {
        const std::string dir = flow_cache_dir();
        if (dir.empty())
            throw ConfigError("nctlm calibrate: no cache directory (set NCTLM_CACHE_DIR or HOME), pass -o FILE");
        std::filesystem::create_directories(dir);
        out = dir + "/flow-" + table.hash() + ".json";
    }
    write_atomically(out, table.to_json().dump(1) + "\n");
    std::cout << fmt::format("flow table for hbm section {} ({}): {} request sizes, measured in {:.2f} s -> {}\n",
                             table.hash(), cfg.platform.name, table.rows().size(), seconds, out);
    std::cout << "  bytes  cold read ns   sustained GB/s per PC: seq read  random read  seq write (peak "
              << fmt::format("{:.2f})\n", table.peak());
    for (const auto& r : table.rows())
        std::cout << fmt::format("  {:>5}  {:>12.1f}   {:>30.2f}  {:>11.2f}  {:>9.2f}\n", r.bytes, r.cold_read,
                                 table.sustained(r.bytes, flow::PcPattern::Sequential, false, true),
                                 table.sustained(r.bytes, flow::PcPattern::Random, false, true),
                                 table.sustained(r.bytes, flow::PcPattern::Sequential, true, true));
    return 0;
}

} // namespace nctlm
