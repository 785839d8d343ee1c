// `nctlm sensitivity` and `nctlm uncertainty`: error bars for one run. Both write a sweep spec of
// labelled cases (sweep_spec.h, `cases:`) into the output directory and run it through cmd_sweep,
// so the points run in parallel (-j), on Slurm (--backend slurm), resume (--resume) and show a
// progress bar exactly as a sweep's do; then they read the rows back and do the arithmetic
// (study_math.h). docs/sensitivity.md describes the method and shows examples.
#include "apps/nctlm/study_math.h"
#include "apps/nctlm/sweep.h"
#include "models/common/config.h"
#include "platforms/platform_config.h"
#include "testbenches/testbench.h"

#include <algorithm>
#include <boost/program_options.hpp>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <yaml-cpp/yaml.h>

namespace po = boost::program_options;
namespace fs = std::filesystem;
using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

namespace nctlm {
namespace {
// Parses args into desc's bound variables; false after printing --help.
bool parse_or_help(const po::options_description& desc, const std::vector<std::string>& args) {
    po::variables_map vm;
    po::store(po::command_line_parser(args).options(desc).run(), vm);
    if (vm.count("help")) {
        std::cout << desc << "\n";
        return false;
    }
    po::notify(vm);
    return true;
}


constexpr int kOk = 0, kUsage = 2, kInterrupted = 130;

// What both studies share: the run being studied and how its points run.
struct Study {
    std::string platform, testbench, workload, out_dir, backend = "local";
    std::vector<std::string> sets, params, figures;
    size_t jobs = 0;
    bool resume = false, no_plot = false;
    double timeout_s = 0;
    std::vector<std::string> sbatch_args;

    void add_options(po::options_description& d) {
        d.add_options()("platform,p", po::value(&platform)->required(), "platform YAML")  //
            ("testbench,t", po::value(&testbench)->required(), "testbench name")           //
            ("workload,w", po::value(&workload), "workload YAML merged over the platform")  //
            ("set,s", po::value(&sets)->composing(), "override section.key=value (repeatable)")  //
            ("output,o", po::value(&out_dir)->required(), "output directory")                   //
            ("jobs,j", po::value(&jobs), "points run at once (default: the number of cores)")   //
            ("backend", po::value(&backend), "local (default) or slurm")                         //
            ("resume", po::bool_switch(&resume), "reuse the points already run in DIR")          //
            ("params", po::value<std::string>()->notifier([this](const std::string& v) { params = split(v); }),
             "comma-separated parameters (section.key) to vary; default: see --help text")  //
            ("figures", po::value<std::string>()->notifier([this](const std::string& v) { figures = split(v); }),
             "comma-separated headline results to report (default: every numeric one that moves)")  //
            ("timeout", po::value(&timeout_s), "per-point timeout in seconds")                         //
            ("sbatch-arg", po::value(&sbatch_args)->composing(), "extra sbatch argument (repeatable)")  //
            ("no-plot", po::bool_switch(&no_plot), "no PNG");
    }

    static std::vector<std::string> split(const std::string& text) {
        std::vector<std::string> out;
        std::stringstream ss(text);
        for (std::string item; std::getline(ss, item, ',');)
            if (!item.empty())
                out.push_back(item);
        return out;
    }

    // The run's effective configuration, validated as `nctlm run` would.
    ConfigTree load() const {
        ConfigTree tree = ConfigTree::from_file(platform);
        if (!workload.empty())
            tree.merge_file(workload);
        for (auto& s : sets)
            tree.set(s);
        PlatformConfig::load(tree);
        make_testbench(testbench)->configure(tree);
        tree.check_sections(PlatformConfig::sections());
        return tree;
    }

    // The fields named by --params (checked), else those `pick` accepts.
    std::vector<FieldInfo> choose(bool (*pick)(const FieldInfo&)) const {
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

    // Writes the spec of `cases` and runs it as a sweep into out_dir. Returns the sweep's exit code
    // (3 when some point failed: a perturbation can make a configuration invalid, which the study
    // reports rather than stops on).
    int run_cases(const std::string& name, const std::vector<std::pair<std::string, std::vector<std::string>>>& cases,
                  const std::string& note) const {
        fs::create_directories(out_dir);
        YAML::Emitter y;
        y << YAML::Comment(note) << YAML::BeginMap;
        y << YAML::Key << "name" << YAML::Value << name;
        y << YAML::Key << "platform" << YAML::Value << fs::absolute(platform).lexically_normal().string();
        y << YAML::Key << "testbench" << YAML::Value << testbench;
        if (!workload.empty())
            y << YAML::Key << "workload" << YAML::Value << fs::absolute(workload).lexically_normal().string();
        if (!sets.empty()) {
            y << YAML::Key << "set" << YAML::Value << YAML::BeginMap;
            for (auto& s : sets) {
                auto eq = s.find('=');
                y << YAML::Key << s.substr(0, eq) << YAML::Value << s.substr(eq + 1);
            }
            y << YAML::EndMap;
        }
        if (timeout_s > 0)
            y << YAML::Key << "timeout" << YAML::Value << timeout_s;
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
        fs::path spec = fs::path(out_dir) / (name + ".sweep.yaml");
        std::ofstream(spec) << y.c_str() << "\n";
        std::vector<std::string> args = {spec.string(), "-o", out_dir, "--backend", backend, "--no-plot"};
        if (jobs)
            args.insert(args.end(), {"-j", std::to_string(jobs)});
        if (resume)
            args.push_back("--resume");
        for (auto& a : sbatch_args)
            args.insert(args.end(), {"--sbatch-arg", a});
        return cmd_sweep(args);
    }

    // The rows of the sweep, by case label (status, results).
    std::map<std::string, json> rows() const {
        std::map<std::string, json> out;
        std::ifstream in(fs::path(out_dir) / "sweep.json");
        json manifest = json::parse(in);
        for (auto& p : manifest["points"]) {
            std::ifstream r(fs::path(out_dir) / "rows" / (p["id"].get<std::string>() + ".json"));
            if (!r)
                continue;
            json row = json::parse(r);
            if (row.value("hash", "") == p["hash"])
                out[p["axes"]["case"].get<std::string>()] = row;
        }
        return out;
    }

    // Numeric headline results of a row (flattened keys), in the order the testbench gives them.
    static std::vector<std::pair<std::string, double>> numbers(const json& row) {
        std::vector<std::pair<std::string, double>> out;
        if (row.contains("results"))
            for (auto& [k, v] : row["results"].items())
                if (v.is_number())
                    out.emplace_back(k, v.get<double>());
        return out;
    }
    static std::optional<double> figure(const json& row, const std::string& name) {
        if (row.value("status", "") != "ok" || !row.contains("results") || !row["results"].contains(name) ||
            !row["results"][name].is_number())
            return std::nullopt;
        return row["results"][name].get<double>();
    }

    void write(const std::string& file, const std::string& text) const {
        std::ofstream f(fs::path(out_dir) / file);
        f << text;
        if (!f)
            throw std::runtime_error("cannot write " + (fs::path(out_dir) / file).string());
    }

    std::string run_line() const {
        std::string s = "-p " + platform + " -t " + testbench + (workload.empty() ? "" : " -w " + workload);
        for (auto& a : sets)
            s += " --set " + a;
        return s;
    }
};

std::string pct(double v) { return std::isfinite(v) ? fmt::format("{:+.2f} %", v * 100) : "n/a"; }
std::string num(double v) { return fmt::format("{:.6g}", v); }

// ---- sensitivity -----------------------------------------------------------------------------

// Varied by default: every rate, clock, latency, ratio and cycle count. Structural counts and sizes
// (engines, stacks, pseudo-channels, partitions, buffers, granularities) move a figure in steps, not
// smoothly: a secant over +-1 of them is a kink, not a derivative, so they are varied only when
// named with --params.
bool sensitivity_default(const FieldInfo& f) {
    bool cycles = f.key.size() > 7 && f.key.compare(f.key.size() - 7, 7, "_cycles") == 0;
    return f.numeric() && f.provenance != Provenance::setting &&
           ((f.unit != "count" && f.unit != "bytes") || cycles);
}

struct Perturbed {
    FieldInfo field;
    double base = 0;
    std::optional<double> down, up;  // numeric values (base units); nullopt: that side not run
    std::string down_text, up_text, note;
};

// The values below and above `base`: ±step, or the plausible range with --range. Whole-number
// fields move by at least one; a side that would leave the field's domain is dropped.
Perturbed perturb(const FieldInfo& f, double base, double step, bool use_range) {
    Perturbed p{f, base, std::nullopt, std::nullopt, "", "", ""};
    double lo = base * (1 - step), hi = base * (1 + step);
    if (use_range && !f.plausible.empty())
        std::tie(lo, hi) = plausible_bounds(f, base);
    bool whole = f.unit == "count" || f.unit == "bytes";
    if (whole) {
        lo = std::round(lo);
        hi = std::round(hi);
        if (lo >= base && base >= 1)
            lo = base - 1;
        if (hi <= base)
            hi = base + 1;
    }
    if (base == 0 && !(use_range && !f.plausible.empty())) {
        p.note = "zero: no relative perturbation";
        return p;
    }
    if (lo < base && lo > 0) {
        p.down = lo;
        p.down_text = numeric_text(f, lo);
    }
    if (hi > base) {
        p.up = hi;
        p.up_text = numeric_text(f, hi);
    }
    return p;
}

std::string case_label(const std::string& param, const char* side) { return param + ":" + side; }

int cmd_sensitivity_impl(const std::vector<std::string>& args) {
    Study st;
    double step_pct = 10;
    bool use_range = false;
    size_t top = 12;
    po::options_description desc(
        "nctlm sensitivity -p PLATFORM -t TESTBENCH -o DIR: one-at-a-time elasticities of each headline result\n"
        "(default parameters: every rate, clock, latency and cycle count of the platform; structural counts\n"
        "and sizes only with --params)");
    desc.add_options()("help,h", "this help");
    st.add_options(desc);
    desc.add_options()("step", po::value(&step_pct), "perturbation up and down in percent (default 10)")  //
        ("range", po::bool_switch(&use_range), "perturb calibrated/assumed parameters to the ends of their "
                                               "plausible range instead of +-step")  //
        ("top", po::value(&top), "rows per figure on stdout (default 12)");
    if (!parse_or_help(desc, args))
        return kOk;
    if (!(step_pct > 0 && step_pct < 100))
        throw ConfigError("--step " + num(step_pct) + ": expected a percentage in (0, 100)");

    ConfigTree tree = st.load();
    std::vector<Perturbed> ps;
    std::vector<std::pair<std::string, std::vector<std::string>>> cases = {{"base", {}}};
    for (auto& f : st.choose(&sensitivity_default)) {
        double base = numeric_value(f, tree.effective()[f.section][f.key]);
        Perturbed p = perturb(f, base, step_pct / 100, use_range);
        if (p.down)
            cases.push_back({case_label(f.name(), "down"), {f.name() + "=" + p.down_text}});
        if (p.up)
            cases.push_back({case_label(f.name(), "up"), {f.name() + "=" + p.up_text}});
        ps.push_back(p);
    }
    std::cerr << fmt::format("sensitivity: {} parameters, {} runs ({} {})\n", ps.size(), cases.size(),
                             use_range ? "plausible ranges, else +-" : "+-", num(step_pct) + " %");
    int rc = st.run_cases("sensitivity", cases, "nctlm sensitivity " + st.run_line());
    if (rc == kUsage || rc == kInterrupted)
        return rc;

    auto rows = st.rows();
    if (!rows.count("base") || rows["base"].value("status", "") != "ok")
        throw ConfigError("sensitivity: the base run failed: " +
                          (rows.count("base") ? rows["base"].value("error", "") : std::string("no row")));
    const json& base = rows["base"];
    std::vector<std::string> figures = st.figures;
    if (figures.empty())
        for (auto& [k, _] : Study::numbers(base))
            figures.push_back(k);

    ojson report = ojson::object();
    report["run"] = st.run_line();
    report["method"] = use_range ? "plausible range (else +-" + num(step_pct) + " %)" : "+-" + num(step_pct) + " %";
    report["parameters"] = ojson::array();
    for (auto& p : ps) {
        ojson j = {{"name", p.field.name()}, {"provenance", provenance_name(p.field.provenance)},
                   {"source", p.field.source}, {"plausible", p.field.plausible},
                   {"base", tree.effective()[p.field.section][p.field.key]},
                   {"down", p.down_text}, {"up", p.up_text}, {"note", p.note}};
        for (const char* side : {"down", "up"}) {
            auto it = rows.find(case_label(p.field.name(), side));
            if (it != rows.end() && it->second.value("status", "") != "ok")
                j["note"] = fmt::format("{}{} run {}: {}", j["note"].get<std::string>().empty()
                                                             ? ""
                                                             : j["note"].get<std::string>() + "; ",
                                        side, it->second.value("status", ""), it->second.value("error", ""));
        }
        report["parameters"].push_back(j);
    }
    report["figures"] = ojson::object();
    std::string csv = "figure,parameter,provenance,plausible,base,down,up,figure_base,figure_down,figure_up,"
                      "down_change,up_change,elasticity\n";
    std::vector<std::string> shown;
    for (auto& fig : figures) {
        auto f0 = Study::figure(base, fig);
        if (!f0) {
            std::cerr << "sensitivity: no numeric result '" << fig << "' in the base run\n";
            continue;
        }
        struct Row {
            const Perturbed* p;
            std::optional<double> fd, fu, e;
        };
        std::vector<Row> out;
        for (auto& p : ps) {
            Row r{&p, std::nullopt, std::nullopt, std::nullopt};
            if (p.down)
                if (auto it = rows.find(case_label(p.field.name(), "down")); it != rows.end())
                    r.fd = Study::figure(it->second, fig);
            if (p.up)
                if (auto it = rows.find(case_label(p.field.name(), "up")); it != rows.end())
                    r.fu = Study::figure(it->second, fig);
            r.e = study::elasticity(p.base, *f0, r.fd ? p.down : std::nullopt, r.fd, r.fu ? p.up : std::nullopt,
                                    r.fu);
            out.push_back(r);
        }
        bool moves = std::any_of(out.begin(), out.end(), [](const Row& r) { return r.e && std::fabs(*r.e) > 1e-9; });
        if (!moves && st.figures.empty())
            continue;  // an echo of an input (n, tiles, bytes): nothing to rank
        std::stable_sort(out.begin(), out.end(), [](const Row& a, const Row& b) {
            return (a.e ? std::fabs(*a.e) : -1) > (b.e ? std::fabs(*b.e) : -1);
        });
        ojson list = ojson::array();
        for (auto& r : out) {
            double dc = r.fd ? *r.fd / *f0 - 1 : NAN, uc = r.fu ? *r.fu / *f0 - 1 : NAN;
            list.push_back({{"parameter", r.p->field.name()}, {"provenance", provenance_name(r.p->field.provenance)},
                            {"plausible", r.p->field.plausible}, {"down", r.p->down_text}, {"up", r.p->up_text},
                            {"figure_down", r.fd ? json(*r.fd) : json()}, {"figure_up", r.fu ? json(*r.fu) : json()},
                            {"down_change", r.fd ? json(dc) : json()}, {"up_change", r.fu ? json(uc) : json()},
                            {"elasticity", r.e ? json(*r.e) : json()}});
            csv += fmt::format("{},{},{},\"{}\",\"{}\",\"{}\",\"{}\",{},{},{},{},{},{}\n", fig, r.p->field.name(),
                               provenance_name(r.p->field.provenance), r.p->field.plausible,
                               tree.effective()[r.p->field.section][r.p->field.key].dump(), r.p->down_text,
                               r.p->up_text, num(*f0), r.fd ? num(*r.fd) : "", r.fu ? num(*r.fu) : "",
                               r.fd ? num(dc) : "", r.fu ? num(uc) : "", r.e ? num(*r.e) : "");
        }
        report["figures"][fig] = {{"base", *f0}, {"elasticities", list}};
        shown.push_back(fig);

        std::cout << fmt::format("\n{} = {} ({}): elasticity d ln {} / d ln parameter, ranked\n", fig, num(*f0),
                                 st.testbench, fig);
        std::cout << fmt::format("| {:>2} | {:<34} | {:<10} | {:>10} | {:>10} | {:>10} |\n", "#", "parameter",
                                 "provenance", "elasticity", "down", "up");
        std::cout << "| --: | --- | --- | --: | --: | --: |\n";
        for (size_t i = 0; i < out.size() && i < top; ++i) {
            auto& r = out[i];
            if (!r.e || std::fabs(*r.e) < 1e-9)
                break;
            std::cout << fmt::format("| {:>2} | {:<34} | {:<10} | {:>+10.4f} | {:>10} | {:>10} |\n", i + 1,
                                     "`" + r.p->field.name() + "`", provenance_name(r.p->field.provenance), *r.e,
                                     r.fd ? pct(*r.fd / *f0 - 1) : "", r.fu ? pct(*r.fu / *f0 - 1) : "");
        }
    }
    std::vector<std::string> failed;
    for (auto& p : report["parameters"])
        if (!p["note"].get<std::string>().empty())
            failed.push_back(p["name"].get<std::string>() + " (" + p["note"].get<std::string>() + ")");
    if (!failed.empty()) {
        std::cout << "\nnot ranked:";
        for (auto& f : failed)
            std::cout << "\n  " << f;
        std::cout << "\n";
    }
    st.write("sensitivity.json", report.dump(1) + "\n");
    st.write("sensitivity.csv", csv);
    if (!st.no_plot && !shown.empty()) {
        std::string script = find_script("tornado");
        if (script.empty()) {
            std::cerr << "sensitivity: no scripts/tornado found; skipping the plots\n";
        } else {
            std::vector<std::vector<std::string>> cmds;
            for (auto& fig : shown)
                cmds.push_back({script, (fs::path(st.out_dir) / "sensitivity.json").string(), "--figure", fig,
                                "-o", (fs::path(st.out_dir) / ("tornado-" + fig + ".png")).string()});
            auto rcs = run_all(cmds, st.jobs ? st.jobs : 2);
            for (size_t i = 0; i < rcs.size(); ++i)
                if (rcs[i] != 0)
                    std::cerr << "sensitivity: tornado plot for " << shown[i] << " failed (exit " << rcs[i] << ")\n";
        }
    }
    std::cerr << "sensitivity: " << (fs::path(st.out_dir) / "sensitivity.json").string() << ", sensitivity.csv"
              << (st.no_plot ? "" : ", tornado-*.png") << "\n";
    return kOk;
}

// ---- uncertainty ------------------------------------------------------------------------------

// Sampled by default: calibrated or assumed numbers with a range. Sizes and granularities (bytes)
// are structural (powers of two that must divide one another) and stay at their value.
bool uncertainty_default(const FieldInfo& f) {
    return f.numeric() && f.unit != "bytes" && !f.plausible.empty() &&
           (f.provenance == Provenance::calibrated || f.provenance == Provenance::assumed);
}

int cmd_uncertainty_impl(const std::vector<std::string>& args) {
    Study st;
    size_t n = 32;
    uint64_t seed = 1;
    po::options_description desc(
        "nctlm uncertainty -p PLATFORM -t TESTBENCH -o DIR: Latin hypercube over the calibrated/assumed\n"
        "parameters within their plausible ranges; median and 5-95 % interval of each headline result");
    desc.add_options()("help,h", "this help");
    st.add_options(desc);
    desc.add_options()("samples,n", po::value(&n), "runs (default 32)")  //
        ("seed", po::value(&seed), "sampling seed (default 1): the same seed gives the same runs");
    if (!parse_or_help(desc, args))
        return kOk;
    if (n < 2 || n > 100000)
        throw ConfigError("--samples " + std::to_string(n) + ": expected 2..100000");

    ConfigTree tree = st.load();
    auto fields = st.choose(&uncertainty_default);
    std::vector<std::pair<double, double>> bounds;
    std::vector<double> base;
    for (auto& f : fields) {
        if (f.plausible.empty())
            throw ConfigError("--params: '" + f.name() + "' is " + provenance_name(f.provenance) +
                              " and has no plausible range to sample");
        base.push_back(numeric_value(f, tree.effective()[f.section][f.key]));
        bounds.push_back(plausible_bounds(f, base.back()));
    }
    auto unit = study::latin_hypercube(n, fields.size(), seed);
    std::vector<std::vector<double>> values(n, std::vector<double>(fields.size()));
    std::vector<std::pair<std::string, std::vector<std::string>>> cases = {{"base", {}}};
    size_t width = std::to_string(n - 1).size();
    for (size_t s = 0; s < n; ++s) {
        std::vector<std::string> assigns;
        for (size_t d = 0; d < fields.size(); ++d) {
            double v = study::scale_to(unit[s][d], bounds[d].first, bounds[d].second);
            std::string text = numeric_text(fields[d], v);
            values[s][d] = numeric_value(fields[d], json(text));  // as the run sees it (counts rounded)
            assigns.push_back(fields[d].name() + "=" + text);
        }
        cases.push_back({fmt::format("s{:0{}}", s, width), assigns});
    }
    std::cerr << fmt::format("uncertainty: {} parameters, {} samples (seed {}) + the base run\n", fields.size(), n,
                             seed);
    int rc = st.run_cases("uncertainty", cases, fmt::format("nctlm uncertainty {} -n {} --seed {}", st.run_line(), n,
                                                            seed));
    if (rc == kUsage || rc == kInterrupted)
        return rc;
    auto rows = st.rows();
    if (!rows.count("base") || rows["base"].value("status", "") != "ok")
        throw ConfigError("uncertainty: the base run failed");
    std::vector<std::string> figures = st.figures;
    if (figures.empty())
        for (auto& [k, _] : Study::numbers(rows["base"]))
            figures.push_back(k);

    ojson report = ojson::object();
    report["run"] = st.run_line();
    report["samples"] = n;
    report["seed"] = seed;
    report["parameters"] = ojson::array();
    for (size_t d = 0; d < fields.size(); ++d)
        report["parameters"].push_back({{"name", fields[d].name()},
                                        {"provenance", provenance_name(fields[d].provenance)},
                                        {"plausible", fields[d].plausible},
                                        {"base", tree.effective()[fields[d].section][fields[d].key]},
                                        {"low", numeric_text(fields[d], bounds[d].first)},
                                        {"high", numeric_text(fields[d], bounds[d].second)}});
    report["figures"] = ojson::object();
    size_t ok = 0;
    std::string csv = "case";
    for (auto& f : fields)
        csv += "," + f.name();
    for (auto& fig : figures)
        csv += "," + fig;
    csv += "\n";
    for (size_t s = 0; s < n; ++s) {
        std::string label = cases[s + 1].first;
        auto it = rows.find(label);
        bool good = it != rows.end() && it->second.value("status", "") == "ok";
        ok += good;
        csv += label;
        for (size_t d = 0; d < fields.size(); ++d)
            csv += "," + num(values[s][d]);
        for (auto& fig : figures) {
            auto v = good ? Study::figure(it->second, fig) : std::nullopt;
            csv += "," + (v ? num(*v) : std::string());
        }
        csv += "\n";
    }
    std::cout << fmt::format("\n{} ({} of {} samples ran; seed {}): median [5 %, 95 %] over {} parameters\n",
                             st.testbench, ok, n, seed, fields.size());
    std::cout << "| figure | base | median | 5 % | 95 % | spread mostly from |\n| --- | --: | --: | --: | --: | --- |\n";
    for (auto& fig : figures) {
        auto f0 = Study::figure(rows["base"], fig);
        std::vector<double> ys;
        std::vector<std::vector<double>> xs(fields.size());
        for (size_t s = 0; s < n; ++s) {
            auto it = rows.find(cases[s + 1].first);
            if (it == rows.end())
                continue;
            auto v = Study::figure(it->second, fig);
            if (!v)
                continue;
            ys.push_back(*v);
            for (size_t d = 0; d < fields.size(); ++d)
                xs[d].push_back(values[s][d]);
        }
        if (ys.empty() || !f0)
            continue;
        double lo = study::quantile(ys, 0.05), med = study::quantile(ys, 0.5), hi = study::quantile(ys, 0.95);
        if (st.figures.empty() && hi - lo <= 1e-12 * std::max(1.0, std::fabs(med)))
            continue;  // an echo of an input: no spread
        // The parameters whose sampled value ranks the figure best, by squared Spearman correlation
        // (for independent samples, about the share of the figure's rank variance each explains).
        // With many parameters some irrelevant one correlates by chance, so a parameter is named
        // only above the Bonferroni threshold: |rho| >= z(0.05 / 2 / parameters) / sqrt(runs - 1).
        double alpha = 0.05 / 2 / double(std::max<size_t>(1, fields.size()));
        double z_lo = 0, z_hi = 10;
        for (int it = 0; it < 60; ++it) {  // solve P(|Z| > z) = 2 alpha
            double z = (z_lo + z_hi) / 2;
            (0.5 * std::erfc(z / std::sqrt(2.0)) > alpha ? z_lo : z_hi) = z;
        }
        double noise = z_hi / std::sqrt(double(ys.size() > 1 ? ys.size() - 1 : 1));
        std::vector<std::pair<double, size_t>> r2;
        for (size_t d = 0; d < fields.size(); ++d) {
            double r = study::spearman(xs[d], ys);
            r2.push_back({r * r, d});
        }
        std::sort(r2.begin(), r2.end(), [](auto& a, auto& b) { return a.first > b.first; });
        ojson drivers = ojson::array();
        std::string named;
        for (size_t i = 0; i < r2.size() && i < 5; ++i) {
            double rho = study::spearman(xs[r2[i].second], ys);
            bool significant = std::fabs(rho) >= noise;
            drivers.push_back({{"parameter", fields[r2[i].second].name()}, {"spearman", rho},
                               {"share", r2[i].first}, {"significant", significant}});
            if (i < 3 && significant)
                named += fmt::format("{}{} (rho^2 {:.2f})", named.empty() ? "" : ", ",
                                     fields[r2[i].second].name(), r2[i].first);
        }
        report["figures"][fig] = {{"base", *f0}, {"median", med}, {"p5", lo}, {"p95", hi}, {"runs", ys.size()},
                                  {"drivers", drivers}};
        std::cout << fmt::format("| {} | {} | {} | {} ({}) | {} ({}) | {} |\n", fig, num(*f0), num(med), num(lo),
                                 pct(lo / *f0 - 1), num(hi), pct(hi / *f0 - 1), named);
    }
    st.write("uncertainty.json", report.dump(1) + "\n");
    st.write("uncertainty.csv", csv);
    std::cerr << "uncertainty: " << (fs::path(st.out_dir) / "uncertainty.json").string() << ", uncertainty.csv\n";
    return kOk;
}

} // namespace

int cmd_sensitivity(const std::vector<std::string>& args) { return cmd_sensitivity_impl(args); }
int cmd_uncertainty(const std::vector<std::string>& args) { return cmd_uncertainty_impl(args); }

} // namespace nctlm
