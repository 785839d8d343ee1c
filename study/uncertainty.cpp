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


// ---- uncertainty ------------------------------------------------------------------------------

// Sampled by default: calibrated or assumed numbers with a range. Sizes and granularities (bytes)
// are structural (powers of two that must divide one another) and stay at their value.
bool uncertainty_default(const FieldInfo& f) {
    return f.numeric() && f.unit != "bytes" && !f.plausible.empty() &&
           (f.provenance == Provenance::calibrated || f.provenance == Provenance::assumed);
}

// The unit numeric_value() gives a field's value in.
std::string base_unit(const FieldInfo& f) {
    if (f.unit == "bytes")
        return "B";
    if (f.unit == "s")
        return "ns";
    if (f.unit == "number")
        return "1";
    return f.unit;  // count, Hz, B/s
}

} // namespace

int run_uncertainty(const StudyRun& st, const UncertaintyOptions& o) {
    const size_t n = o.samples;
    const uint64_t seed = o.seed;
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
    int rc = st.run_base_then(cases, "uncertainty",
                              fmt::format("nctlm uncertainty {} -n {} --seed {}", st.run_line(), n, seed));
    if (rc == kExitUsage || rc == kExitInterrupted)
        return rc;
    auto rows = st.rows();
    std::vector<std::string> figures = st.figures;
    if (figures.empty())
        for (auto& [k, _] : StudyRun::numbers(rows["base"]))
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
    // Parameter columns hold numbers in the unit their header names (base units: B, Hz, B/s, ns).
    std::vector<std::string> header = {"case"};
    for (auto& f : fields)
        header.push_back(f.name() + " [" + base_unit(f) + "]");
    for (auto& fig : figures)
        header.push_back(study::figure_unit(fig).empty() ? fig : fig + " [" + study::figure_unit(fig) + "]");
    CsvWriter csv(header);
    for (size_t s = 0; s < n; ++s) {
        std::string label = cases[s + 1].first;
        auto it = rows.find(label);
        bool good = it != rows.end() && it->second.value("status", "") == "ok";
        ok += good;
        std::vector<std::string> cells = {label};
        for (size_t d = 0; d < fields.size(); ++d)
            cells.push_back(num(values[s][d]));
        for (auto& fig : figures) {
            auto v = good ? StudyRun::figure(it->second, fig) : std::nullopt;
            cells.push_back(v ? num(*v) : std::string());
        }
        csv.row(cells);
    }
    std::cout << fmt::format("\n{} ({} of {} samples ran; seed {}): median [5 %, 95 %] over {} parameters\n",
                             st.testbench, ok, n, seed, fields.size());
    std::cout << "| figure | base | median | 5 % | 95 % | spread mostly from |\n| --- | --: | --: | --: | --: | --- |\n";
    for (auto& fig : figures) {
        auto f0 = StudyRun::figure(rows["base"], fig);
        std::vector<double> ys;
        std::vector<std::vector<double>> xs(fields.size());
        for (size_t s = 0; s < n; ++s) {
            auto it = rows.find(cases[s + 1].first);
            if (it == rows.end())
                continue;
            auto v = StudyRun::figure(it->second, fig);
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
        report["figures"][fig] = {{"base", *f0},      {"unit", study::figure_unit(fig)}, {"median", med},
                                  {"p5", lo},         {"p95", hi},                       {"runs", ys.size()},
                                  {"drivers", drivers}};
        std::cout << fmt::format("| {} | {} | {} | {} ({}) | {} ({}) | {} |\n", fig, num(*f0), num(med), num(lo),
                                 pct(lo / *f0 - 1), num(hi), pct(hi / *f0 - 1), named);
    }
    st.write("uncertainty.json", report.dump(1) + "\n");
    st.write("uncertainty.csv", csv.text());
    std::vector<std::string> drawn;
    if (!report["figures"].empty())
        drawn = st.draw("interval", {{st.file("uncertainty.json"), "-o", st.file("uncertainty.png")}});
    std::cerr << "uncertainty: " << st.file("uncertainty.json") << ", uncertainty.csv";
    for (auto& d : drawn)
        std::cerr << ", " << d;
    std::cerr << "\n";
    return kExitOk;
}

} // namespace nctlm::study
