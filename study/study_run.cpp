#include "study/study_run.h"

#include "models/common/atomic_file.h"
#include "platforms/platform_config.h"
#include "study/exit_status.h"
#include "platforms/shipped_configs.h"
#include "study/local_pool.h"
#include "testbenches/runner.h"
#include "testbenches/testbench.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <iostream>
#include <yaml-cpp/yaml.h>

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace nctlm::study {

std::string num(double v) { return fmt::format("{:.6g}", v); }
std::string pct(double v) { return std::isfinite(v) ? fmt::format("{:+.2f} %", v * 100) : "n/a"; }

ConfigTree StudyRun::load() const {
    RunOptions o;
    o.platform_file = platform;
    o.workload_file = workload;
    o.testbench = testbench;
    o.overrides = sets;
    return load_run(o).tree;
}

std::vector<FieldInfo> StudyRun::choose(bool (*pick)(const FieldInfo&)) const {
    auto all = PlatformConfig::field_infos();
    std::vector<FieldInfo> out;
    if (params.empty()) {
        for (auto& f : all)
            if (pick(f))
                out.push_back(f);
        return out;
    }
    std::vector<std::string> names;
    for (auto& f : all)
        names.push_back(f.name());
    for (auto& p : params) {
        auto it = std::find_if(all.begin(), all.end(), [&](const FieldInfo& f) { return f.name() == p; });
        if (it == all.end()) {
            std::string hint = did_you_mean(p, names);
            throw ConfigError("--params: unknown parameter '" + p + "'" +
                              (hint.empty() ? "" : "; did you mean '" + hint + "'?"));
        }
        if (!it->numeric())
            throw ConfigError("--params: '" + p + "' is a " + it->unit + ", not a number that can be scaled");
        out.push_back(*it);
    }
    return out;
}

int StudyRun::run_cases(const std::string& name, const Cases& cases, const std::string& note) const {
    auto absolute = [](const std::string& path) { return fs::absolute(path).lexically_normal().string(); };
    YAML::Emitter y;
    y << YAML::Comment(note) << YAML::BeginMap;
    y << YAML::Key << "name" << YAML::Value << name;
    y << YAML::Key << "platform" << YAML::Value << absolute(resolve_config(platform, "platforms"));
    y << YAML::Key << "testbench" << YAML::Value << testbench;
    if (!workload.empty())
        y << YAML::Key << "workload" << YAML::Value << absolute(resolve_config(workload, "workloads"));
    if (!sets.empty()) {
        y << YAML::Key << "set" << YAML::Value << YAML::BeginMap;
        for (auto& s : sets) {
            auto eq = s.find('=');
            y << YAML::Key << s.substr(0, eq) << YAML::Value << s.substr(eq + 1);
        }
        y << YAML::EndMap;
    }
    y << YAML::Key << "cases" << YAML::Value << YAML::BeginSeq;
    for (auto& [label, assigns] : cases) {
        y << YAML::Flow << YAML::BeginMap << YAML::Key << "case" << YAML::Value << label;
        if (!assigns.empty()) {
            y << YAML::Key << "set" << YAML::Value << YAML::BeginMap;
            for (auto& a : assigns) {
                auto eq = a.find('=');
                y << YAML::Key << a.substr(0, eq) << YAML::Value << a.substr(eq + 1);
            }
            y << YAML::EndMap;
        }
        y << YAML::EndMap;
    }
    y << YAML::EndSeq << YAML::EndMap;
    fs::create_directories(run.out_dir);
    std::string spec = file(name + ".sweep.yaml");
    write_atomically(spec, std::string(y.c_str()) + "\n");
    sweep::RunSettings settings = run;
    settings.plot = false;  // the study draws its own
    return sweep::run_sweep(sweep::Spec::load(spec), settings);
}

int StudyRun::run_base_then(const Cases& cases, const std::string& name, const std::string& note) const {
    StudyRun first = *this;
    first.run.prune = false;  // the other points' files stay for the full run to reuse
    int rc = first.run_cases(name, {cases.front()}, note);
    if (rc == kExitUsage || rc == kExitInterrupted)
        return rc;
    auto all = rows();
    auto base = all.find(cases.front().first);
    if (base == all.end() || base->second.value("status", "") != "ok")
        throw ConfigError(name + ": the base run failed: " +
                          (base == all.end() ? std::string("no row") : base->second.value("error", "")));
    std::vector<std::string> have;
    for (auto& [k, _] : numbers(base->second))
        have.push_back(k);
    for (auto& f : figures)
        if (std::find(have.begin(), have.end(), f) == have.end()) {
            std::string list, hint = did_you_mean(f, have);
            for (auto& h : have)
                list += (list.empty() ? "" : ", ") + h;
            throw ConfigError("--figures: '" + f + "' is not a numeric result of testbench '" + testbench + "'" +
                              (hint.empty() ? "" : "; did you mean '" + hint + "'?") + " (its results: " + list +
                              ")");
        }
    StudyRun rest = *this;
    rest.run.resume = true;  // the base row just made
    return rest.run_cases(name, cases, note);
}

std::map<std::string, json> StudyRun::rows() const {
    std::map<std::string, json> out;
    std::ifstream in(file("sweep.json"));
    json manifest = json::parse(in);
    for (auto& p : manifest["points"]) {
        std::ifstream r(fs::path(run.out_dir) / "rows" / (p["id"].get<std::string>() + ".json"));
        if (!r)
            continue;
        json row = json::parse(r);
        if (row.value("hash", "") == p["hash"])
            out[p["axes"]["case"].get<std::string>()] = row;
    }
    return out;
}

std::vector<std::pair<std::string, double>> StudyRun::numbers(const json& row) {
    std::vector<std::pair<std::string, double>> out;
    if (row.contains("results"))
        for (auto& [k, v] : row["results"].items())
            if (v.is_number())
                out.emplace_back(k, v.get<double>());
    return out;
}
std::optional<double> StudyRun::figure(const json& row, const std::string& name) {
    if (row.value("status", "") != "ok" || !row.contains("results") || !row["results"].contains(name) ||
        !row["results"][name].is_number())
        return std::nullopt;
    return row["results"][name].get<double>();
}

std::vector<std::string> StudyRun::draw(const std::string& script_name,
                                        const std::vector<std::vector<std::string>>& args) const {
    std::vector<std::string> drawn;
    if (!run.plot || args.empty())
        return drawn;
    std::string script = find_script(script_name);
    if (script.empty()) {
        std::cerr << "no " << script_name << " script found (" << data_dirs().found_by
                  << "; see `nctlm paths`): no plots drawn\n";
        return drawn;
    }
    std::vector<std::vector<std::string>> commands;
    for (auto& a : args) {
        commands.push_back({script});
        commands.back().insert(commands.back().end(), a.begin(), a.end());
    }
    auto rcs = sweep::run_all(commands, run.jobs ? run.jobs : 2);
    for (size_t i = 0; i < rcs.size(); ++i) {
        if (rcs[i] != 0)
            std::cerr << script_name << ": " << args[i].back() << " failed (exit " << rcs[i] << ")\n";
        else
            drawn.push_back(fs::path(args[i].back()).filename().string());
    }
    return drawn;
}

void StudyRun::write(const std::string& name, const std::string& text) const { write_atomically(file(name), text); }

std::string StudyRun::file(const std::string& name) const { return (fs::path(run.out_dir) / name).string(); }

std::string StudyRun::run_line() const {
    std::string s = "-p " + platform + " -t " + testbench + (workload.empty() ? "" : " -w " + workload);
    for (auto& a : sets)
        s += " --set " + a;
    return s;
}

} // namespace nctlm::study
