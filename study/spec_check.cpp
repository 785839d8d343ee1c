#include "study/spec_check.h"

#include "models/common/config.h"
#include "platforms/platform_config.h"
#include "testbenches/testbench.h"

#include <algorithm>
#include <set>

namespace nctlm::sweep {
namespace {

// Columns every row has besides its axes and results (make_table).
const std::vector<std::string> kRunColumns = {"id",          "status",      "exit_code",         "sim_time_ns",
                                              "host_time_s", "point_host_time_s", "hash",        "error",
                                              "simulated_ns", "sim_wall_s",  "point_wall_s"};

std::string hint(const std::string& word, const std::vector<std::string>& candidates) {
    std::string h = did_you_mean(word, candidates);
    return h.empty() ? "" : "; did you mean '" + h + "'?";
}

// Each plot field with its mark id, in spec order.
std::vector<std::pair<std::string, std::string>> plot_fields(const Spec& spec) {
    std::vector<std::pair<std::string, std::string>> out;
    for (size_t i = 0; i < spec.plots.size(); ++i) {
        const PlotSpec& p = spec.plots[i];
        std::string id = "plot" + std::to_string(i);
        out.emplace_back(id + ".x", p.x);
        for (size_t k = 0; k < p.y.size(); ++k)
            out.emplace_back(id + ".y" + std::to_string(k), p.y[k]);
        if (!p.hue.empty())
            out.emplace_back(id + ".hue", p.hue);
    }
    return out;
}

bool is_column(const Spec& spec, const std::string& field) {
    std::vector<std::string> axes = spec.axis_names();
    return std::find(axes.begin(), axes.end(), field) != axes.end() ||
           std::find(kRunColumns.begin(), kRunColumns.end(), field) != kRunColumns.end();
}

} // namespace

void check_spec(const Spec& spec) {
    const TestbenchInfo* tb = find_testbench(spec.testbench);
    if (!tb) {
        std::vector<std::string> names;
        for (auto& t : testbenches())
            names.push_back(t.name);
        throw ConfigError(spec.at("testbench") + ": unknown testbench '" + spec.testbench + "'" +
                          hint(spec.testbench, names) + " (nctlm testbenches)");
    }
    std::vector<std::string> keys;
    for (auto& f : PlatformConfig::field_infos())
        keys.push_back(f.name());
    for (auto& s : tb->sections)
        for (auto& p : s.params())
            keys.push_back(s.section + "." + p.key);
    std::set<std::string> named;  // every key the spec sets or varies
    for (auto& [k, _] : spec.set)
        named.insert(k);
    for (auto& g : spec.groups) {
        for (auto& a : g.axes)
            if (a.key != "workload" && a.key != "case")
                named.insert(a.key);
        for (auto& c : g.case_sets)
            for (auto& [k, _] : c)
                named.insert(k);
    }
    for (auto& o : spec.overrides)
        for (auto& [k, _] : o.set)
            named.insert(k);
    for (auto& k : named)
        if (std::find(keys.begin(), keys.end(), k) == keys.end())
            throw ConfigError(spec.at(k) + ": '" + k + "' is not a key of the platform or of testbench '" +
                              spec.testbench + "'" + hint(k, keys) + " (nctlm describe " + spec.testbench + ")");
    for (auto& [id, field] : plot_fields(spec))
        if (id.size() > 4 && id.compare(id.size() - 4, 4, ".hue") == 0 && !is_column(spec, field))
            throw ConfigError(spec.at(id) + ": plot.hue '" + field + "' is not an axis of this sweep" +
                              hint(field, spec.axis_names()));
}

std::vector<std::string> plot_result_fields(const Spec& spec) {
    std::vector<std::string> out;
    for (auto& [id, field] : plot_fields(spec))
        if (!is_column(spec, field) && std::find(out.begin(), out.end(), field) == out.end())
            out.push_back(field);
    return out;
}

void check_plot_results(const Spec& spec, const nlohmann::ordered_json& row) {
    nlohmann::ordered_json results = row.contains("results") ? row["results"] : nlohmann::ordered_json::object();
    std::vector<std::string> have = spec.axis_names();
    for (auto& [k, _] : results.items())
        have.push_back(k);
    for (auto& [id, field] : plot_fields(spec))
        if (!is_column(spec, field) && !results.contains(field))
            throw ConfigError(spec.at(id) + ": plot." + id.substr(id.find('.') + 1, 1) + " '" + field +
                              "' is neither an axis nor a result of testbench '" + spec.testbench + "'" +
                              hint(field, have) + " (its results: " + [&] {
                                  std::string all;
                                  for (auto& [k, _] : results.items())
                                      all += (all.empty() ? "" : ", ") + k;
                                  return all;
                              }() + ")");
}

} // namespace nctlm::sweep
