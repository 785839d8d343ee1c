#include "study/sweep_job.h"

#include "testbenches/runner.h"

namespace nctlm::sweep {

Job prepare(const Spec& spec, const Point& p) {
    Job j{p, "", "", ""};
    try {
        RunOptions o;
        o.platform_file = spec.platform;
        o.workload_file = p.workload;
        o.testbench = spec.testbench;
        o.overrides = p.sets;
        LoadedRun loaded = load_run(o);
        const ConfigTree& tree = loaded.tree;
        j.effective_yaml = tree.effective_yaml();
        j.hash = hash_hex(spec.testbench + "\n" + tree.effective().dump());
    } catch (const ConfigError& e) {
        j.error = e.what();
    } catch (const UnitError& e) {
        j.error = e.what();
    }
    if (!j.error.empty()) {
        std::string sets;
        for (auto& s : p.sets)
            sets += s + "\n";
        j.hash = hash_hex("invalid\n" + spec.testbench + "\n" + p.workload + "\n" + sets);
    }
    return j;
}

std::vector<std::string> run_argv(const Spec& spec, const Job& j, const std::string& stats) {
    std::vector<std::string> argv = {"nctlm", "run", "-p", spec.platform, "-t", spec.testbench};
    if (!j.point.workload.empty())
        argv.insert(argv.end(), {"-w", j.point.workload});
    for (auto& s : j.point.sets)
        argv.insert(argv.end(), {"--set", s});
    argv.insert(argv.end(), {"--stats-json", stats, "-q"});
    return argv;
}

std::string shell_quote(const std::string& s) {
    if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+@")
                          == std::string::npos)
        return s;
    std::string out = "'";
    for (char c : s)
        out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

std::string command_line(const std::vector<std::string>& argv) {
    std::string cmd;
    for (auto& a : argv)
        cmd += (cmd.empty() ? "" : " ") + shell_quote(a);
    return cmd;
}

std::string axes_text(const KeyValues& axes) {
    std::string out;
    for (auto& [k, v] : axes)
        out += (out.empty() ? "" : " ") + k + "=" + v;
    return out;
}

nlohmann::ordered_json base_row(const Job& j) {
    nlohmann::ordered_json r = nlohmann::ordered_json::object();
    r["id"] = j.point.id;
    r["index"] = j.point.index;
    r["hash"] = j.hash;
    r["status"] = "pending";
    r["exit_code"] = nullptr;
    nlohmann::ordered_json axes = nlohmann::ordered_json::object();
    for (auto& [k, v] : j.point.axes)
        axes[k] = v;
    r["axes"] = axes;
    r["results"] = nlohmann::ordered_json::object();
    r["sim_time_ns"] = nullptr;        // simulated time of the run
    r["host_time_s"] = nullptr;        // host time its simulation took (sc_start)
    r["point_host_time_s"] = nullptr;  // host time of the whole point (process start to exit)
    r["error"] = "";
    return r;
}

} // namespace nctlm::sweep
