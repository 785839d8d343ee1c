// The result table of a sweep (sweep_spec.h, "Table"): rows flattened from the row records, in
// point order, written as RFC 4180 CSV and as JSONL.
#include "models/common/csv.h"
#include "study/sweep_spec.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <regex>

namespace nctlm::sweep {

nlohmann::ordered_json flatten(const nlohmann::json& value, const std::string& prefix) {
    nlohmann::ordered_json out = nlohmann::ordered_json::object();
    if (!value.is_object()) {
        out[prefix.empty() ? "value" : prefix] = value;
        return out;
    }
    for (auto& [k, v] : value.items()) {
        std::string name = prefix.empty() ? k : prefix + "." + k;
        if (v.is_object()) {
            nlohmann::ordered_json sub = flatten(v, name);
            for (auto it = sub.begin(); it != sub.end(); ++it)
                out[it.key()] = it.value();
        } else
            out[name] = v;
    }
    return out;
}

nlohmann::ordered_json typed(const std::string& text) {
    static const std::regex number(R"(^[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?$)");
    if (std::regex_match(text, number)) {
        if (text.find_first_of(".eE") == std::string::npos && text.size() < 18)
            return std::stoll(text);
        errno = 0;
        double v = std::strtod(text.c_str(), nullptr);
        if (!std::isfinite(v) || (errno == ERANGE && std::fabs(v) > 1))
            return text;  // out of double's range: keep the text rather than throw
        return v;
    }
    return text;
}

Table make_table(const std::vector<std::string>& axis_names, std::vector<nlohmann::ordered_json> records) {
    std::sort(records.begin(), records.end(), [](const auto& a, const auto& b) {
        return a.at("index").template get<size_t>() < b.at("index").template get<size_t>();
    });
    Table t;
    t.columns = {"id", "status", "exit_code"};
    for (auto& a : axis_names)
        t.columns.push_back(a);
    std::vector<std::string> figures;
    for (auto& r : records)
        if (r.contains("results"))
            for (auto& [k, _] : r["results"].items())
                if (std::find(figures.begin(), figures.end(), k) == figures.end() &&
                    std::find(axis_names.begin(), axis_names.end(), k) == axis_names.end())
                    figures.push_back(k);
    t.columns.insert(t.columns.end(), figures.begin(), figures.end());
    for (const char* c : {"sim_time_ns", "host_time_s", "point_host_time_s", "hash", "error"})
        t.columns.push_back(c);
    // 0.2's names of the three times, kept one release (CHANGELOG): last, so the new ones lead.
    const std::pair<const char*, const char*> aliases[] = {
        {"simulated_ns", "sim_time_ns"}, {"sim_wall_s", "host_time_s"}, {"point_wall_s", "point_host_time_s"}};
    for (auto& [old_name, _] : aliases)
        t.columns.push_back(old_name);
    for (auto& r : records) {
        for (auto& [old_name, new_name] : aliases)  // a row of 0.2 has only the old name
            if (!r.contains(new_name) && r.contains(old_name))
                r[new_name] = r[old_name];
            else if (r.contains(new_name))
                r[old_name] = r[new_name];
        nlohmann::ordered_json row = nlohmann::ordered_json::object();
        for (auto& c : t.columns) {
            if (r.contains("axes") && r["axes"].contains(c))
                row[c] = typed(r["axes"][c].get<std::string>());
            else if (r.contains("results") && r["results"].contains(c) &&
                     std::find(figures.begin(), figures.end(), c) != figures.end())
                row[c] = r["results"][c];
            else if (r.contains(c) && c != "axes" && c != "results")
                row[c] = r[c];
            else
                row[c] = nullptr;
        }
        t.rows.push_back(std::move(row));
    }
    return t;
}

std::string to_csv(const Table& t) {
    CsvWriter csv(t.columns);
    for (auto& r : t.rows) {
        std::vector<std::string> cells;
        for (auto& c : t.columns) {
            const auto& v = r[c];
            cells.push_back(v.is_null() ? "" : v.is_string() ? v.get<std::string>() : v.dump());
        }
        csv.row(cells);
    }
    return csv.text();
}

std::string to_jsonl(const Table& t) {
    std::string out;
    for (auto& r : t.rows)
        out += r.dump() + "\n";
    return out;
}

} // namespace nctlm::sweep
