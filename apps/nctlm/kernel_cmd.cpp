// `nctlm kernel FILE.py::FN --arg NAME=bf16[4096,8192] ... -p trn2 [-o kernel.json] [--check REF.py::FN]
// [run options]`: traces an NKI-style Python kernel with the nctlm.nki tracer (python3 -m nctlm.nki),
// then runs the kernel program it wrote as `nctlm run -t kernel -w kernel.json` does. Tracer options
// are taken here; every other option goes to the run.
#include "apps/nctlm/cli.h"
#include "apps/nctlm/spawn.h"
#include "models/common/config.h"
#include "models/pe/pe_config.h"
#include "platforms/shipped_configs.h"

#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <iostream>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace nctlm {

namespace {

const char* kKernelUsage = R"(usage: nctlm kernel FILE.py::FN [--arg NAME=VALUE]... -p PLATFORM [options]

Traces the NKI-style kernel FN in FILE.py (import nctlm.nki as nki; docs/kernels.md) and runs it on
the platform's NeuronCores. VALUE is a tensor, dtype[dims] (bf16[4096,8192]), or a number; sym:V
or dims NAME=V (bf16[ROWS=4096,COLS=2048]) keep an integer symbolic: the program's args.

tracer options:
  --arg NAME=VALUE   a kernel parameter (repeatable)
  -o, --output FILE  keep the traced kernel program (JSON)
  --check REF.py::FN also execute the kernel with numpy and compare its outputs with REF's
  --seed S, --rtol R, --atol A, --bufs N   passed to the tracer (python3 -m nctlm.nki --help)
every other option is `nctlm run`'s (-p, --set, --stats-json, --trace, --timing, --max-memory, -q, ...).
Exit status: 0 ok, 2 bad kernel or usage, 3 simulation error, 4 --check found a mismatch.
)";

} // namespace

int kernel_command(const std::vector<std::string>& args) {
    if (args.empty() || args[0] == "-h" || args[0] == "--help") {
        std::cout << kKernelUsage;
        return args.empty() ? 2 : 0;
    }
    std::string spec = args[0], output;
    if (spec.find("::") == std::string::npos || spec[0] == '-')
        throw ConfigError("nctlm kernel: the first argument is FILE.py::FUNCTION, not '" + spec + "'\n" + kKernelUsage);
    std::vector<std::string> tracer = {python_interpreter(), "-m", "nctlm.nki", spec}, run;
    bool check = false;
    for (size_t i = 1; i < args.size(); ++i) {
        const std::string& a = args[i];
        auto value = [&](const std::string& flag) {
            if (i + 1 >= args.size())
                throw ConfigError("nctlm kernel: " + flag + " needs a value");
            return args[++i];
        };
        if (a == "--arg" || a == "--seed" || a == "--rtol" || a == "--atol" || a == "--bufs" || a == "--check") {
            check = check || a == "--check";
            tracer.push_back(a);
            tracer.push_back(value(a));
        } else if (a == "-o" || a == "--output") {
            output = value(a);
        } else {
            run.push_back(a);
        }
    }
    // The tracer fits its buffers into this platform's SBUF and PSUM (a bad platform is the run's to report).
    std::string platform;
    std::vector<std::string> sets;
    for (size_t i = 0; i + 1 < run.size(); ++i) {
        if (run[i] == "-p" || run[i] == "--platform")
            platform = run[i + 1];
        if (run[i] == "-s" || run[i] == "--set")
            sets.push_back(run[i + 1]);
    }
    if (!platform.empty()) {
        try {
            ConfigTree tree = ConfigTree::from_file(find_config(platform, "platforms"));
            for (auto& a : sets)
                tree.set(a);
            PeConfig pe = tree.load<PeConfig>("pe");
            tracer.insert(tracer.end(), {"--sbuf-bytes", std::to_string(pe.sbuf_partition_bytes), "--psum-bytes",
                                         std::to_string(pe.psum_partition_bytes)});
        } catch (const std::exception&) {
        }
    }
    std::string python = python_package_dir();
    if (python.empty())
        throw ConfigError("nctlm kernel: the nctlm Python package (python/nctlm) is not in the data directories "
                          "searched (NCTLM_DATA_DIR, then " + data_dirs().found_by + "; see `nctlm paths`)");
    // The program goes to -o, or to a temporary file removed afterwards.
    OutputFile out(output, "nctlm-kernel");
    output = out.path;
    tracer.push_back("-o");
    tracer.push_back(output);
    int traced = spawn(tracer, python);
    if (traced == 127)
        throw ConfigError("nctlm kernel: python3 not found (install it: scripts/install-deps)");
    if (traced != 0 && traced != 4)
        return traced == 2 ? 2 : 1;  // the tracer printed why (file:line)
    std::error_code ec;
    if (fs::file_size(output, ec) == 0 || ec)
        return traced == 4 ? 4 : 1;
    run.insert(run.begin(), {"-t", "kernel", "-w", output});
    int ran = run_command(run);
    if (ran != 0)
        return ran;
    if (check && traced == 4)
        return 4;
    return 0;
}

} // namespace nctlm
