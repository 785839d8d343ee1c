// A testbench drives a platform, measures, and returns its headline figures. `nctlm run
// --testbench NAME` looks it up in the registry (registry.cpp: one line per testbench; a user's
// own simulator adds its testbenches with register_testbench before calling cli_main).
#pragma once

#include "models/common/config.h"
#include "models/common/params.h"
#include "platforms/platform.h"

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace nctlm {

class Testbench {
public:
    virtual ~Testbench() = default;
    // Reads the `testbench` and `workload` sections it needs (with its own field lists).
    virtual void configure(const ConfigTree& tree) = 0;
    // Attaches traffic to the built platform (elaboration time).
    virtual void build(Platform& platform) = 0;
    // Headline figures after the simulation, for `results` in the stats JSON.
    virtual nlohmann::json results() const = 0;
    // Human summary, a few lines.
    virtual std::string summary() const;
    // Bytes this testbench's own records need (descriptors, tensors, samples), before running:
    // `nctlm run --max-memory` refuses a run whose estimate is past the limit.
    virtual uint64_t memory_estimate() const { return 0; }
    // Simulated time this testbench runs for by its own configuration (a traffic duration), or 0
    // if it runs until its work is done: the run's time limit is at least ten times this.
    virtual double duration_ns() const { return 0; }
    // Testbenches whose workload is a program file (TestbenchInfo::program_workload): its path,
    // given before configure().
    virtual void set_program_file(const std::string& path) { (void)path; }
};

struct TestbenchInfo {
    std::string name;
    std::string doc;
    std::function<std::unique_ptr<Testbench>()> make;
    // The sections configure() reads, each with its field list (param_section<S>("testbench")):
    // `describe NAME`, the JSON Schema and the missing-workload hint come from these.
    std::vector<ParamSection> sections = {};
    // -w names a program file the testbench reads itself (kernel JSON), not YAML merged into the config.
    bool program_workload = false;
    // Where a program named without a path is shipped: configs/<program_kind>/NAME.json.
    std::string program_kind = "kernels";
};

const std::vector<TestbenchInfo>& testbenches();
// Adds (or replaces, by name) a testbench; call before cli_main()/run(). Not thread-safe.
void register_testbench(TestbenchInfo info);
const TestbenchInfo* find_testbench(const std::string& name);  // nullptr if unknown
std::unique_ptr<Testbench> make_testbench(const std::string& name);  // throws ConfigError if unknown

} // namespace nctlm
