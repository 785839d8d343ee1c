#include "study/sweep_output.h"

#include "models/common/atomic_file.h"
#include "models/common/version.h"
#include "study/exit_status.h"

#include <fmt/format.h>
#include <fstream>
#include <iostream>
#include <sstream>

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

namespace nctlm::sweep {

std::string read_text(const fs::path& path) {
    std::ifstream f(path, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

namespace {
ojson plot_json(const PlotSpec& p) {
    return {{"x", p.x}, {"y", p.y}, {"hue", p.hue}, {"logx", p.logx}, {"logy", p.logy}, {"title", p.title},
            {"file", p.file}};
}
} // namespace

ojson plots_json(const Spec& spec) {
    ojson plots = ojson::array();
    for (auto& p : spec.plots)
        plots.push_back(plot_json(p));
    return plots;
}

void write_manifest(const OutDir& out, const Spec& spec, const std::vector<Job>& jobs) {
    ojson m = ojson::object();
    m["name"] = spec.name;
    m["spec"] = spec.file;
    m["nctlm_version"] = version();
    m["platform"] = spec.platform;
    m["testbench"] = spec.testbench;
    m["workload"] = spec.workload;
    m["axes"] = spec.axis_names();
    m["plots"] = plots_json(spec);
    m["points"] = ojson::array();
    for (auto& j : jobs) {
        ojson p = {{"id", j.point.id}, {"index", j.point.index}, {"hash", j.hash}};
        ojson axes = ojson::object();
        for (auto& [k, v] : j.point.axes)
            axes[k] = v;
        p["axes"] = axes;
        m["points"].push_back(p);
    }
    write_atomically(out.manifest(), m.dump(1) + "\n");
}

void write_point_yaml(const OutDir& out, const Spec& spec, const Job& j) {
    std::string text = fmt::format("# sweep {} point {}: {}\n", spec.name, j.point.id, axes_text(j.point.axes));
    if (!j.error.empty()) {
        text += "# invalid: " + j.error + "\n";
    } else {
        std::vector<std::string> argv = run_argv(spec, j, out.point_file(j.point.id, ".json").string());
        text += "# replay: " + command_line(argv) + "\n# effective config hash " + j.hash + "\n" + j.effective_yaml;
    }
    write_atomically(out.point_file(j.point.id, ".yaml"), text);
}

std::optional<ojson> read_row(const fs::path& path) {
    std::error_code ec;
    if (!fs::exists(path, ec))
        return std::nullopt;
    try {
        return ojson::parse(read_text(path));
    } catch (const std::exception&) {
        return std::nullopt;  // cannot happen with rename, but a hand-edited file must not stop a merge
    }
}

std::map<std::string, ojson> done_rows(const OutDir& out) {
    std::map<std::string, ojson> done;
    std::error_code ec;
    for (auto& e : fs::directory_iterator(out.rows(), ec)) {
        if (e.path().extension() != ".json")
            continue;
        auto r = read_row(e.path());
        if (r && r->value("status", "") == "ok" && r->contains("hash"))
            done[(*r)["hash"].get<std::string>()] = *r;
    }
    return done;
}

Totals merge(const OutDir& out, const std::vector<std::string>& axis_names, const std::vector<Job>& jobs,
             const std::map<size_t, ojson>* in_memory) {
    std::vector<ojson> records;
    Totals t;
    for (auto& j : jobs) {
        std::optional<ojson> r;
        if (in_memory) {
            auto it = in_memory->find(j.point.index);
            if (it != in_memory->end())
                r = it->second;
        } else {
            r = read_row(out.row(j.point.id));
            if (r && r->value("hash", "") != j.hash)
                r.reset();  // a row of some other sweep that used this directory
        }
        if (!r) {
            ++t.missing;
            continue;
        }
        ++t.rows;
        ((*r)["status"] == "ok" ? t.ok : t.failed)++;
        records.push_back(*r);
    }
    Table table = make_table(axis_names, records);
    write_atomically(out.root / "results.csv", to_csv(table));
    write_atomically(out.root / "results.jsonl", to_jsonl(table));
    return t;
}

int report(const OutDir& out, const std::string& name, const Totals& t, size_t skipped, double seconds) {
    std::cerr << fmt::format("sweep {}: {} points: {} ok, {} failed{}{}{}; results in {}\n", name,
                             t.rows + t.missing, t.ok, t.failed,
                             t.missing ? fmt::format(", {} missing", t.missing) : "",
                             skipped ? fmt::format(" ({} reused by --resume)", skipped) : "",
                             seconds >= 0 ? fmt::format(" in {:.1f} s", seconds) : "",
                             (out.root / "results.csv").string());
    return t.failed || t.missing ? kExitFailed : kExitOk;
}

} // namespace nctlm::sweep
