// Sweep specs: parsing, range expansion, point expansion, and the result table (CSV/JSONL).
// Pure C++ (yaml-cpp, nlohmann::json, units): no SystemC, no processes; unit-tested directly.
//
//   name: b2b_channels
//   platform: ../platforms/trn1.yaml     # relative to this file (else to the working directory),
//                                        # or a shipped name: trn1
//   testbench: b2b
//   workload: ../workloads/x.yaml        # optional
//   set: {testbench.n: 16}               # applied to every point
//   grid:                                # cartesian product; each key its own axis
//     dma.channel_release: [on_accept, on_response]
//   zip:                                 # paired lists (equal length): one axis group
//     dma.channels: [1, 2, 4]
//     dma.queue_channels: "1..4 x2"      # a range: A..B [step S | xF], units allowed
//   overrides:                           # per-point extra settings
//     - when: {dma.channels: 1}
//       set: {dma.queues: 1}
//   cases:                               # one axis `case` of labelled points, each with its own
//     - {case: base}                     #   settings (one-at-a-time studies: nctlm sensitivity,
//     - {case: hop-up, set: {noc.hop_cycles: 9}}   # nctlm uncertainty)
//   timeout: 600 s                       # per point (a bare number is seconds)
//   plot: {x: dma.queue_channels, y: ratio, hue: dma.channel_release}
//
// Groups (each grid key, each zip block) nest in file order: the first varies slowest.
#pragma once

#include "models/common/config.h"

#include <cstddef>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>
#include <yaml-cpp/yaml.h>

namespace nctlm::sweep {

using KeyValues = std::vector<std::pair<std::string, std::string>>;

// "8..64 step 8", "100 GB/s..800 GB/s x2", "1 KiB..1 MiB x4", "1..4" (step 1). Inclusive of the
// end when a step lands on it. Throws ConfigError naming the text.
bool is_range(const std::string& text);
// "600", "600 s", "10 min"-free durations ("1.5 ms"): seconds, > 0 and at most a year; UnitError.
double parse_timeout_seconds(const std::string& text);
std::vector<std::string> expand_range(const std::string& text);

struct Axis {
    std::string key;  // section.key, or `workload` (a workload file per point)
    std::vector<std::string> values;
};

struct AxisGroup {
    bool zip = false;         // false: one grid axis
    std::vector<Axis> axes;   // one for grid, several for zip (equal lengths)
    std::vector<KeyValues> case_sets;  // `cases:`: the settings of each value of the `case` axis
    size_t size() const { return axes.empty() ? 0 : axes.front().values.size(); }
};

struct Override {
    KeyValues when;  // axis key -> value text; all must match
    KeyValues set;   // section.key -> value
};

struct PlotSpec {
    std::string x, hue, title, file;
    std::vector<std::string> y;  // first solid, the others dashed over it (e.g. an analytic curve)
    bool logx = false, logy = false;
};

struct Point {
    size_t index = 0;
    std::string id;                // zero-padded index: file names sort like the rows
    KeyValues axes;                // axis key -> value text, in axis order
    std::vector<std::string> sets; // "section.key=value": base set, axes, overrides (later wins)
    std::string workload;          // file, "" for none
};

struct Spec {
    std::string file, dir;         // the spec file and its directory (absolute)
    std::string name, platform, testbench, workload;
    KeyValues set;
    std::vector<AxisGroup> groups;
    std::vector<Override> overrides;
    std::vector<PlotSpec> plots;
    double timeout_s = 3600;
    // "file:line:col" of what the spec names, for messages found after parsing (spec_check.h):
    // each config key by its first mention, and "testbench", "platform", "workload", "name",
    // "plot<i>.x", "plot<i>.y<j>", "plot<i>.hue", "plot<i>.file".
    std::map<std::string, std::string> marks;
    std::string at(const std::string& what) const;  // marks[what], else the file

    static Spec load(const std::string& path);  // throws ConfigError with file:line:col
    static Spec parse(const YAML::Node& doc, const std::string& file, const std::string& dir);
    std::vector<std::string> axis_names() const;
    std::vector<Point> points() const;
    // How many points the grid has, without building them (saturates at SIZE_MAX).
    size_t count_points() const;
    // A path from the spec: absolute, relative to the spec's directory, else to the working dir;
    // a bare name that is neither is kept as a shipped config's name (trn1, gemm_32x3072x32).
    std::string resolve(const std::string& path) const;
};

// "i/n": this process runs the points whose index % n == i.
struct Slice {
    size_t index = 0, count = 1;
    static Slice parse(const std::string& text);
    bool has(size_t point_index) const { return point_index % count == index; }
};

// A path from a spec that names a file in the output directory: relative, no `..` out of it.
bool inside_output(const std::string& relative);

// Stable 64-bit FNV-1a, hex: names a point's effective configuration for --resume.
std::string hash_hex(const std::string& text);

// {"a": {"b": 1}, "c": 2} -> {"a.b": 1, "c": 2}, key order kept; arrays stay values.
nlohmann::ordered_json flatten(const nlohmann::json& value, const std::string& prefix = "");

// A value as written in the spec: a number if the whole text is one, else the text.
nlohmann::ordered_json typed(const std::string& text);

// One row per finished point, merged in index order into the result table. A row record is
// what rows/<id>.json holds: {id, index, hash, status, exit_code, axes{}, results{}, sim_time_ns
// (simulated), host_time_s (the run's sc_start), point_host_time_s (the whole process), error}.
// The table keeps 0.2's names simulated_ns, sim_wall_s, point_wall_s as trailing aliases.
struct Table {
    std::vector<std::string> columns;
    std::vector<nlohmann::ordered_json> rows;  // flat: column -> value
};
Table make_table(const std::vector<std::string>& axis_names, std::vector<nlohmann::ordered_json> records);
std::string to_csv(const Table& table);  // RFC 4180 (models/common/csv.h)
std::string to_jsonl(const Table& table);

} // namespace nctlm::sweep
