// Helpers for tests: paths into the source tree, one simulation run, the CLI as a subprocess.
#pragma once

#include "testbenches/runner.h"

#include <string>
#include <vector>

namespace nctlm::test {

std::string source_path(const std::string& relative);  // NCTLM_SOURCE_DIR + "/" + relative
std::string platform(const std::string& name);          // configs/platforms/<name>.yaml
// A shipped platform's configuration with `--set`-style overrides ("hbm.page_policy=closed").
PlatformConfig load_platform(const std::string& name, const std::vector<std::string>& sets = {});

// One simulation in this process (call once per TEST).
RunOutcome run_testbench(const std::string& platform_name, const std::string& testbench,
                         const std::vector<std::string>& overrides = {}, const std::string& workload = "");

struct CliResult {
    int exit_code;
    std::string out, err;
};
// Runs build/bin/nctlm with arguments (shell-quoted by the caller where needed).
CliResult run_cli(const std::string& arguments);

// Writes text to a fresh temporary file and returns its path (ending in `suffix`).
std::string temp_file(const std::string& text, const std::string& suffix = ".yaml");

// Compares the named result keys of a run with tests/platform/golden/<name>.json (numbers within
// the golden's relative tolerance, 0.5 % unless it says otherwise; the rest exactly), or writes
// the golden when NCTLM_UPDATE_GOLDENS=1 (the test is then skipped). `name`: "chip/gqa_trn1_g1".
void check_golden(const std::string& name, const RunOutcome& out, const std::vector<std::string>& keys);

} // namespace nctlm::test
