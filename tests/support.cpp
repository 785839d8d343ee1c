#include "tests/support.h"

#include <cmath>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

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

void check_golden(const std::string& name, const RunOutcome& out, const std::vector<std::string>& keys) {
    const double tolerance = 0.005;  // relative; the model is deterministic, this absorbs only rounding
    const std::string path = source_path("tests/platform/golden/" + name + ".json");
    ASSERT_TRUE(out.errors.empty()) << out.errors.front();
    const nlohmann::json& r = out.report["results"];
    if (const char* u = std::getenv("NCTLM_UPDATE_GOLDENS"); u && std::string(u) == "1") {
        nlohmann::json g = {{"tolerance", tolerance}, {"results", nlohmann::json::object()}};
        for (auto& k : keys)
            g["results"][k] = r.at(k);
        std::ofstream(path) << g.dump(2) << "\n";
        GTEST_SKIP() << "golden written: " << path;
    }
    std::ifstream in(path);
    ASSERT_TRUE(in) << "missing golden " << path << " (run with NCTLM_UPDATE_GOLDENS=1)";
    nlohmann::json g = nlohmann::json::parse(in);
    double tol = g.value("tolerance", tolerance);
    for (auto& k : keys) {
        ASSERT_TRUE(g["results"].contains(k)) << name << ": golden lacks " << k;
        const nlohmann::json& want = g["results"][k];
        const nlohmann::json& got = r.at(k);
        if (want.is_number())
            EXPECT_NEAR(got.get<double>(), want.get<double>(), std::abs(want.get<double>()) * tol + 1e-9)
                << name << ": " << k;
        else
            EXPECT_EQ(got, want) << name << ": " << k;
    }
}

} // namespace nctlm::test
