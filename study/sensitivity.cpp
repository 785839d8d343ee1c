#include "study/studies.h"

#include "models/common/config.h"
#include "models/common/csv.h"
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
    // The base run first: --figures is checked against its results before the other runs.
    int rc = st.run_base_then(cases, "sensitivity", "nctlm sensitivity " + st.run_line());
    if (rc == kExitUsage || rc == kExitInterrupted)
        return rc;

    auto rows = st.rows();
    const json& base = rows.at("base");
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
    report["ranked_by"] = use_range ? "swing" : "elasticity";
    report["figures"] = ojson::object();
    CsvWriter csv({"figure", "figure_unit", "parameter", "provenance", "plausible", "base", "down", "up",
                   "figure_base", "figure_down", "figure_up", "down_change_pct", "up_change_pct", "swing_pct",
                   "elasticity", "lopsided"});
    std::vector<std::string> shown;
    for (auto& fig : figures) {
        auto f0 = StudyRun::figure(base, fig);
        if (!f0) {
            std::cerr << "sensitivity: no numeric result '" << fig << "' in the base run\n";
            continue;
        }
        struct Row {
            const Perturbed* p;
            std::optional<double> fd, fu, e, dc, uc;
            double swing = 0;
            bool lopsided = false;
        };
        std::vector<Row> out;
        for (auto& p : ps) {
            Row r{&p, std::nullopt, std::nullopt, std::nullopt, std::nullopt, std::nullopt};
            if (p.down)
                if (auto it = rows.find(case_label(p.field.name(), "down")); it != rows.end())
                    r.fd = StudyRun::figure(it->second, fig);
            if (p.up)
                if (auto it = rows.find(case_label(p.field.name(), "up")); it != rows.end())
                    r.fu = StudyRun::figure(it->second, fig);
            r.e = study::elasticity(p.base, *f0, r.fd ? p.down : std::nullopt, r.fd, r.fu ? p.up : std::nullopt,
                                    r.fu);
            if (r.fd)
                r.dc = *r.fd / *f0 - 1;
            if (r.fu)
                r.uc = *r.fu / *f0 - 1;
            r.swing = study::swing(*f0, r.fd, r.fu);
            r.lopsided = study::lopsided(p.base, *f0, r.fd ? p.down : std::nullopt, r.fd, r.fu ? p.up : std::nullopt,
                                         r.fu);
            out.push_back(r);
        }
        bool moves = std::any_of(out.begin(), out.end(), [](const Row& r) { return r.swing > 1e-9; });
        if (!moves && st.figures.empty())
            continue;  // an echo of an input (n, tiles, bytes): nothing to rank
        // Over plausible ranges the parameters move by different factors, so the largest
        // elasticity need not be the largest swing: rank by what the figure actually did.
        std::stable_sort(out.begin(), out.end(), [&](const Row& a, const Row& b) {
            if (use_range)
                return a.swing > b.swing;
            return (a.e ? std::fabs(*a.e) : -1) > (b.e ? std::fabs(*b.e) : -1);
        });
        ojson list = ojson::array();
        for (auto& r : out) {
            auto opt = [](std::optional<double> v) { return v ? json(*v) : json(); };
            list.push_back({{"parameter", r.p->field.name()}, {"provenance", provenance_name(r.p->field.provenance)},
                            {"plausible", r.p->field.plausible}, {"down", r.p->down_text}, {"up", r.p->up_text},
                            {"figure_down", opt(r.fd)}, {"figure_up", opt(r.fu)}, {"down_change", opt(r.dc)},
                            {"up_change", opt(r.uc)}, {"swing", r.swing}, {"elasticity", opt(r.e)},
                            {"lopsided", r.lopsided}});
            auto cell = [](std::optional<double> v, double scale = 1) { return v ? num(*v * scale) : ""; };
            const json& shown_base = tree.effective()[r.p->field.section][r.p->field.key];
            csv.row({fig, study::figure_unit(fig), r.p->field.name(), provenance_name(r.p->field.provenance),
                     r.p->field.plausible, shown_base.is_string() ? shown_base.get<std::string>() : shown_base.dump(),
                     r.p->down_text, r.p->up_text, num(*f0), cell(r.fd), cell(r.fu), cell(r.dc, 100),
                     cell(r.uc, 100), num(r.swing * 100), cell(r.e), r.lopsided ? "true" : "false"});
        }
        report["figures"][fig] = {{"base", *f0}, {"unit", study::figure_unit(fig)}, {"elasticities", list}};
        shown.push_back(fig);

        std::cout << fmt::format("\n{} = {} ({}): ranked by {}{}\n", fig, num(*f0), st.testbench,
                                 use_range ? "swing (the figure's spread over the parameter's range)"
                                           : "|elasticity| (d ln " + fig + " / d ln parameter)",
                                 std::any_of(out.begin(), out.end(), [](const Row& r) { return r.lopsided; })
                                     ? "; * lopsided: one side moves it far more than the other"
                                     : "");
        std::cout << fmt::format("| {:>2} | {:<34} | {:<10} | {:>10} | {:>9} | {:>10} | {:>10} |\n", "#", "parameter",
                                 "provenance", "elasticity", "swing", "down", "up");
        std::cout << "| --: | --- | --- | --: | --: | --: | --: |\n";
        for (size_t i = 0; i < out.size() && i < top; ++i) {
            auto& r = out[i];
            if (r.swing < 1e-9)
                break;
            std::cout << fmt::format("| {:>2} | {:<34} | {:<10} | {:>10} | {:>9} | {:>10} | {:>10} |\n", i + 1,
                                     "`" + r.p->field.name() + "`" + (r.lopsided ? " *" : ""),
                                     provenance_name(r.p->field.provenance),
                                     r.e ? fmt::format("{:+.4f}", *r.e) : "n/a", fmt::format("{:.2f} %", r.swing * 100),
                                     r.dc ? pct(*r.dc) : "", r.uc ? pct(*r.uc) : "");
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
    st.write("sensitivity.csv", csv.text());
    std::vector<std::vector<std::string>> plots;
    for (auto& fig : shown)
        plots.push_back({st.file("sensitivity.json"), "--figure", fig, "-o", st.file("tornado-" + fig + ".png")});
    std::vector<std::string> drawn = st.draw("tornado", plots);
    std::cerr << "sensitivity: " << st.file("sensitivity.json") << ", sensitivity.csv";
    for (auto& d : drawn)
        std::cerr << ", " << d;
    std::cerr << "\n";
    return kExitOk;
}

} // namespace nctlm::study
