#include "study/sweep_plots.h"

#include "platforms/shipped_configs.h"
#include "study/local_pool.h"

#include <cstdlib>
#include <fmt/format.h>
#include <iostream>

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

namespace nctlm::sweep {
namespace {

std::string plot_script() {
    if (const char* env = std::getenv("NCTLM_PLOT"))
        return env;
    return find_script("plot");
}

} // namespace

void make_plots(const OutDir& out, const std::string& name, const ojson& plots, size_t workers) {
    if (plots.empty())
        return;
    std::string script = plot_script();
    if (script.empty()) {
        std::cerr << "sweep: no scripts/plot found (set NCTLM_PLOT); skipping the plot\n";
        return;
    }
    // The plot labels axes from this executable's field lists (`describe --schema`).
    setenv("NCTLM_EXE", self_exe().c_str(), 1);
    std::vector<std::vector<std::string>> commands;
    std::vector<fs::path> targets;
    int i = 0;
    for (auto& p : plots) {
        std::string file = p.value("file", "");
        if (file.empty())
            file = plots.size() == 1 ? name + ".png" : fmt::format("{}-{}.png", name, i);
        ++i;
        std::vector<std::string> argv = {script, out.root.string(), "--x", p["x"].get<std::string>()};
        for (auto& y : p["y"])
            argv.insert(argv.end(), {"--y", y.get<std::string>()});
        if (!p.value("hue", "").empty())
            argv.insert(argv.end(), {"--hue", p["hue"].get<std::string>()});
        if (p.value("logx", false))
            argv.push_back("--logx");
        if (p.value("logy", false))
            argv.push_back("--logy");
        argv.insert(argv.end(), {"--title", p.value("title", "").empty() ? name : p["title"].get<std::string>()});
        if (!inside_output(file)) {  // a hand-edited manifest (--collect): the spec refuses these
            std::cerr << "sweep: plot file '" << file << "' is not inside " << out.root.string() << "; skipped\n";
            continue;
        }
        fs::path target = out.root / file;
        argv.insert(argv.end(), {"-o", target.string()});
        commands.push_back(argv);
        targets.push_back(target);
    }
    std::vector<int> rcs = run_all(commands, workers);
    for (size_t k = 0; k < commands.size(); ++k) {
        if (rcs[k] != 0)
            std::cerr << fmt::format("sweep: the plot failed (exit {}); rerun: {}\n", rcs[k], command_line(commands[k]));
        else
            std::cerr << "sweep: plot " << targets[k].string() << "\n";
    }
}

} // namespace nctlm::sweep
