// A sweep's output directory: sweep.json (the manifest: spec, axes, plots, every point's id and
// hash), rows/<id>.json (one finished point each, written by rename), points/<id>.yaml|json|log
// (a point's effective config and replay line, its stats JSON, its stderr), and results.csv /
// results.jsonl merged from the rows in point order. A killed sweep leaves only whole files.
#pragma once

#include "study/sweep_job.h"

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace nctlm::sweep {

struct OutDir {
    std::filesystem::path root;
    std::filesystem::path rows() const { return root / "rows"; }
    std::filesystem::path points() const { return root / "points"; }
    std::filesystem::path row(const std::string& id) const { return rows() / (id + ".json"); }
    std::filesystem::path manifest() const { return root / "sweep.json"; }
    std::filesystem::path point_file(const std::string& id, const char* ext) const {
        return points() / (id + ext);
    }
};

std::string read_text(const std::filesystem::path& path);

nlohmann::ordered_json plots_json(const Spec& spec);
void write_manifest(const OutDir& out, const Spec& spec, const std::vector<Job>& jobs);
// points/<id>.yaml: the point's effective config and the command that replays it.
void write_point_yaml(const OutDir& out, const Spec& spec, const Job& job);

std::optional<nlohmann::ordered_json> read_row(const std::filesystem::path& path);
// Rows of earlier runs whose point finished cleanly, by effective-config hash.
std::map<std::string, nlohmann::ordered_json> done_rows(const OutDir& out);

struct Totals {
    size_t rows = 0, ok = 0, failed = 0, missing = 0;
};
// results.csv and results.jsonl from the rows of `jobs`, in point order: from `in_memory` (by point
// index) when given, else from rows/ (a row whose hash differs belongs to another sweep).
Totals merge(const OutDir& out, const std::vector<std::string>& axis_names, const std::vector<Job>& jobs,
             const std::map<size_t, nlohmann::ordered_json>* in_memory);
// The closing line on stderr; the exit status (3 when a point failed or is missing).
int report(const OutDir& out, const std::string& name, const Totals& totals, size_t reused, double seconds);

} // namespace nctlm::sweep
