#include "study/studies.h"

#include "models/common/config.h"
#include "platforms/platform_config.h"
#include "platforms/shipped_configs.h"
#include "study/exit_status.h"
#include "study/local_pool.h"
#include "study/study_math.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <iostream>
#include <nlohmann/json.hpp>

namespace fs = std::filesystem;
using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

namespace nctlm::study {
namespace {

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

} // namespace

int run_sensitivity(const StudyRun& st, const SensitivityOptions& o) {
    const double step_pct = o.step_pct;
    const bool use_range = o.use_range;
    const size_t top = o.top;
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
    if (rc == kExitUsage || rc == kExitInterrupted)
        return rc;

    auto rows = st.rows();
    if (!rows.count("base") || rows["base"].value("status", "") != "ok")
        throw ConfigError("sensitivity: the base run failed: " +
                          (rows.count("base") ? rows["base"].value("error", "") : std::string("no row")));
    const json& base = rows["base"];
    std::vector<std::string> figures = st.figures;
    if (figures.empty())
        for (auto& [k, _] : StudyRun::numbers(base))
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
        auto f0 = StudyRun::figure(base, fig);
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
                    r.fd = StudyRun::figure(it->second, fig);
            if (p.up)
                if (auto it = rows.find(case_label(p.field.name(), "up")); it != rows.end())
                    r.fu = StudyRun::figure(it->second, fig);
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
    std::vector<std::string> drawn;
    if (st.run.plot && !shown.empty()) {
        std::string script = find_script("tornado");
        if (script.empty()) {
            std::cerr << "sensitivity: no tornado script found (" << data_dirs().found_by
                      << "; see `nctlm paths`): no plots drawn\n";
        } else {
            std::vector<std::vector<std::string>> cmds;
            for (auto& fig : shown)
                cmds.push_back({script, st.file("sensitivity.json"), "--figure", fig, "-o",
                                st.file("tornado-" + fig + ".png")});
            auto rcs = sweep::run_all(cmds, st.run.jobs ? st.run.jobs : 2);
            for (size_t i = 0; i < rcs.size(); ++i) {
                if (rcs[i] != 0)
                    std::cerr << "sensitivity: tornado plot for " << shown[i] << " failed (exit " << rcs[i] << ")\n";
                else
                    drawn.push_back("tornado-" + shown[i] + ".png");
            }
        }
    }
    std::cerr << "sensitivity: " << st.file("sensitivity.json") << ", sensitivity.csv";
    for (auto& d : drawn)
        std::cerr << ", " << d;
    std::cerr << "\n";
    return kExitOk;
}

} // namespace nctlm::study
