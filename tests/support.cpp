#include "tests/support.h"

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sys/wait.h>
#include <unistd.h>

namespace nctlm::test {

std::string source_path(const std::string& relative) { return std::string(NCTLM_SOURCE_DIR) + "/" + relative; }

std::string platform(const std::string& name) { return source_path("configs/platforms/" + name + ".yaml"); }

PlatformConfig load_platform(const std::string& name, const std::vector<std::string>& sets) {
    ConfigTree t = ConfigTree::from_file(platform(name));
    for (const auto& s : sets)
        t.set(s);
    return PlatformConfig::load(t);
}

RunOutcome run_testbench(const std::string& platform_name, const std::string& testbench,
                         const std::vector<std::string>& overrides, const std::string& workload) {
    RunOptions o;
    o.platform_file = platform(platform_name);
    o.testbench = testbench;
    o.overrides = overrides;
    o.workload_file = workload.empty() ? "" : source_path(workload);
    return run(o);
}

namespace {
std::string slurp(const std::string& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
}
} // namespace

CliResult run_cli(const std::string& arguments) {
    std::string out = temp_file("", ".out"), err = temp_file("", ".err");
    std::string cmd = std::string(NCTLM_BIN) + " " + arguments + " >" + out + " 2>" + err;
    int status = std::system(cmd.c_str());
    CliResult r{WIFEXITED(status) ? WEXITSTATUS(status) : 128, slurp(out), slurp(err)};
    std::remove(out.c_str());
    std::remove(err.c_str());
    return r;
}

std::string temp_file(const std::string& text, const std::string& suffix) {
    std::string pattern = "/tmp/nctlm-test-XXXXXX" + suffix;
    std::vector<char> buf(pattern.begin(), pattern.end());
    buf.push_back('\0');
    int fd = mkstemps(buf.data(), int(suffix.size()));
    if (fd < 0)
        std::abort();
    if (!text.empty() && write(fd, text.data(), text.size()) != ssize_t(text.size()))
        std::abort();
    close(fd);
    return std::string(buf.data());
}

} // namespace nctlm::test
