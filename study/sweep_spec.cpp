#include "study/sweep_spec.h"

#include "models/common/config.h"
#include "models/common/units.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fmt/format.h>
#include <regex>
#include <set>

namespace fs = std::filesystem;

namespace nctlm::sweep {
namespace {

const std::vector<std::string> kTopKeys = {"name",  "description", "platform", "testbench", "workload", "set",
                                           "grid",  "zip",         "overrides", "timeout",  "plot", "cases"};

std::string mark_of(const std::string& file, const YAML::Node& node) {
    YAML::Mark m = node.Mark();
    return m.is_null() ? file : fmt::format("{}:{}:{}", file, m.line + 1, m.column + 1);
}

[[noreturn]] void fail(const std::string& file, const YAML::Node& node, const std::string& msg) {
    YAML::Mark m = node.Mark();
    if (m.is_null())
        throw ConfigError(file + ": " + msg);
    throw ConfigError(fmt::format("{}:{}:{}: {}", file, m.line + 1, m.column + 1, msg));
}

std::string scalar(const std::string& file, const YAML::Node& node, const std::string& what) {
    if (!node.IsScalar())
        fail(file, node, what + " must be a single value");
    return node.Scalar();
}

// A config key path as --set takes it: section.key, one level deep.
void check_key(const std::string& file, const YAML::Node& node, const std::string& key, bool allow_workload) {
    if (allow_workload && key == "workload")
        return;
    auto dot = key.find('.');
    if (dot == std::string::npos || dot == 0 || dot + 1 == key.size() || key.find('.', dot + 1) != std::string::npos)
        fail(file, node, "'" + key + "' is not a config key path (section.key, e.g. dma.channels)");
}

std::vector<std::string> values_of(const std::string& file, const YAML::Node& node, const std::string& key) {
    std::vector<std::string> out;
    try {
        if (node.IsSequence()) {
            for (const auto& v : node)
                out.push_back(scalar(file, v, "each value of '" + key + "'"));
        } else if (node.IsScalar()) {
            if (is_range(node.Scalar()))
                out = expand_range(node.Scalar());
            else
                out.push_back(node.Scalar());
        } else {
            fail(file, node, "'" + key + "': expected a list of values or a range such as \"8..64 step 8\"");
        }
    } catch (const UnitError& e) {
        fail(file, node, "'" + key + "': " + e.what());
    } catch (const ConfigError& e) {
        if (std::string(e.what()).rfind(file, 0) == 0)
            throw;
        fail(file, node, "'" + key + "': " + e.what());
    }
    if (out.empty())
        fail(file, node, "'" + key + "' has no values");
    return out;
}

KeyValues key_values(const std::string& file, const YAML::Node& node, const std::string& what,
                     bool allow_workload, std::map<std::string, std::string>& marks) {
    if (!node.IsMap())
        fail(file, node, what + " must be a map of section.key: value");
    KeyValues out;
    for (auto it = node.begin(); it != node.end(); ++it) {
        std::string key = it->first.as<std::string>();
        check_key(file, it->first, key, allow_workload);
        marks.emplace(key, mark_of(file, it->first));
        out.emplace_back(key, scalar(file, it->second, what + " '" + key + "'"));
    }
    return out;
}

// std::stod throws out_of_range (an internal error, exit 1) on "1e400": overflow is bad input.
double to_double(const std::string& text) {
    errno = 0;
    char* end = nullptr;
    double v = std::strtod(text.c_str(), &end);
    if (end == text.c_str() || !std::isfinite(v) || (errno == ERANGE && std::fabs(v) > 1))
        throw ConfigError("'" + text + "' is not a finite number");
    return v;
}

struct Quantity {
    double value;
    std::string unit;
};

Quantity split_quantity(const std::string& text) {
    static const std::regex re(R"(^\s*([-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?)\s*(.*?)\s*$)");
    std::smatch m;
    if (!std::regex_match(text, m, re))
        throw ConfigError("'" + text + "' is not a number with an optional unit");
    return {to_double(m[1].str()), m[2].str()};
}

enum class Kind { None, Bytes, Bandwidth, Frequency, Duration };

// The size of one `unit` in its kind's base unit (B, B/s, Hz, ns), using the config parsers.
std::pair<Kind, double> unit_scale(const std::string& unit) {
    if (unit.empty())
        return {Kind::None, 1.0};
    std::string one = "1 " + unit;
    try { return {Kind::Bytes, double(parse_bytes(one))}; } catch (const UnitError&) {}
    try { return {Kind::Bandwidth, parse_bandwidth(one).bytes_per_s}; } catch (const UnitError&) {}
    try { return {Kind::Frequency, parse_frequency(one).hz}; } catch (const UnitError&) {}
    try { return {Kind::Duration, parse_duration(one).ns}; } catch (const UnitError&) {}
    throw ConfigError("unknown unit '" + unit + "'");
}

bool is_plain_number(const std::string& text) {
    static const std::regex number(R"(^\s*[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?\s*$)");
    return std::regex_match(text, number);
}

std::string number_text(double v) {
    if (std::fabs(v - std::round(v)) <= 1e-9 * std::max(1.0, std::fabs(v)) && std::fabs(v) < 1e15)
        return fmt::format("{}", static_cast<long long>(std::llround(v)));
    return fmt::format("{:.12g}", v);
}

} // namespace

bool inside_output(const std::string& relative) {
    fs::path p(relative);
    if (relative.empty() || p.is_absolute())
        return false;
    for (auto& part : p.lexically_normal())
        if (part == "..")
            return false;
    return true;
}

std::string Spec::at(const std::string& what) const {
    auto it = marks.find(what);
    return it == marks.end() ? file : it->second;
}

bool is_range(const std::string& text) { return text.find("..") != std::string::npos; }

std::vector<std::string> expand_range(const std::string& text) {
    static const std::regex re(R"(^\s*(.+?)\s*\.\.\s*(.+?)\s*(?:\s(step)\s+(.+?)|\s*x\s*([0-9.eE+]+))?\s*$)");
    std::smatch m;
    if (!std::regex_match(text, m, re))
        throw ConfigError("range '" + text + "': expected A..B, A..B step S or A..B xF (e.g. \"8..64 step 8\", "
                          "\"100 GB/s..800 GB/s x2\")");
    try {
        Quantity a = split_quantity(m[1].str()), b = split_quantity(m[2].str());
        if (b.unit.empty())
            b.unit = a.unit;
        auto [kind, scale_a] = unit_scale(a.unit);
        auto [kind_b, scale_b] = unit_scale(b.unit);
        if (kind_b != kind)
            throw ConfigError("'" + a.unit + "' and '" + b.unit + "' are different kinds of unit");
        double end = b.value * scale_b / scale_a;  // in a's unit
        double step = 1, factor = 0;
        if (m[3].matched) {
            Quantity s = split_quantity(m[4].str());
            if (s.unit.empty())
                s.unit = a.unit;
            auto [kind_s, scale_s] = unit_scale(s.unit);
            if (kind_s != kind)
                throw ConfigError("step unit '" + s.unit + "' does not match '" + a.unit + "'");
            step = s.value * scale_s / scale_a;
            if (!(step > 0))
                throw ConfigError("the step must be > 0");
        } else if (m[5].matched) {
            factor = to_double(m[5].str());
            if (!(factor > 1))
                throw ConfigError("the factor must be > 1");
            if (!(a.value > 0))
                throw ConfigError("a geometric range must start above 0");
        }
        if (end < a.value)
            throw ConfigError("the end is below the start");
        std::vector<std::string> out;
        const double tolerance = 1e-9 * std::max(1.0, std::fabs(end));
        for (double v = a.value; v <= end + tolerance; v = factor > 0 ? v * factor : v + step) {
            if (out.size() >= 100000)
                throw ConfigError("more than 100000 values");
            double base = v * scale_a;
            if (kind == Kind::Bytes && std::fabs(base - std::round(base)) < 1e-6)
                out.push_back(format_bytes(uint64_t(std::llround(base))));
            else
                out.push_back(number_text(v) + (a.unit.empty() ? "" : " " + a.unit));
        }
        return out;
    } catch (const ConfigError& e) {
        throw ConfigError("range '" + text + "': " + e.what());
    } catch (const UnitError& e) {
        throw ConfigError("range '" + text + "': " + e.what());
    }
}

double parse_timeout_seconds(const std::string& text) {
    double s;
    if (is_plain_number(text)) {  // a bare number is seconds, as on the command line
        try {
            s = to_double(text);
        } catch (const ConfigError& e) {
            throw UnitError(e.what());
        }
    } else {
        s = parse_duration(text).ns / 1e9;
    }
    // Past a year the timeout cannot be meant; beyond ~292 years it overflows the clock.
    if (!(s > 0) || s > 365.0 * 86400)
        throw UnitError("'" + text + "': a timeout must be > 0 and at most a year (365 days)");
    return s;
}

Spec Spec::load(const std::string& path) {
    // Regular file, one document, unique plain keys (else ConfigError with file:line:col).
    YAML::Node doc = load_yaml_file(path);
    fs::path abs = fs::absolute(path).lexically_normal();
    return parse(doc, abs.string(), abs.parent_path().string());
}

std::string Spec::resolve(const std::string& path) const {
    fs::path p(path);
    if (p.is_absolute())
        return p.lexically_normal().string();
    fs::path near = fs::path(dir) / p;
    std::error_code ec;  // a name too long or unreadable is "not there": loading it says why
    if (fs::exists(near, ec))
        return near.lexically_normal().string();
    if (fs::exists(p, ec))
        return fs::absolute(p).lexically_normal().string();
    // A bare name ("trn1", "gemm_32x3072x32": no directory, no extension) is a shipped config,
    // found when the point loads.
    if (path.find_first_of("/.") == std::string::npos)
        return path;
    return near.lexically_normal().string();
}

Spec Spec::parse(const YAML::Node& doc, const std::string& file, const std::string& dir) {
    Spec s;
    s.file = file;
    s.dir = dir;
    if (!doc.IsMap())
        fail(file, doc, "a sweep spec is a map (name, platform, testbench, grid/zip, ...)");
    std::set<std::string> axis_keys;
    auto add_axis_key = [&](const YAML::Node& at, const std::string& key) {
        if (!axis_keys.insert(key).second)
            fail(file, at, "axis '" + key + "' appears twice");
    };
    for (auto it = doc.begin(); it != doc.end(); ++it) {
        std::string key = it->first.as<std::string>();
        YAML::Node v = it->second;
        if (std::find(kTopKeys.begin(), kTopKeys.end(), key) == kTopKeys.end()) {
            std::string hint = did_you_mean(key, kTopKeys);
            fail(file, it->first, "unknown sweep key '" + key + "'" +
                                      (hint.empty() ? "" : "; did you mean '" + hint + "'?"));
        }
        if (key == "name" || key == "platform" || key == "testbench" || key == "workload")
            s.marks[key] = mark_of(file, v);
        if (key == "name") {
            s.name = scalar(file, v, "name");
            // The name names files in -o (NAME.png) and the Slurm job: a plain name, not a path.
            if (s.name.empty() || s.name == "." || s.name == ".." ||
                s.name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") !=
                    std::string::npos)
                fail(file, v, "name '" + s.name + "' must be a plain name (letters, digits, . _ -): it names the "
                                                  "sweep's files inside -o");
        } else if (key == "description") {
        } else if (key == "platform") {
            s.platform = s.resolve(scalar(file, v, "platform"));
        } else if (key == "testbench") {
            s.testbench = scalar(file, v, "testbench");
        } else if (key == "workload") {
            s.workload = s.resolve(scalar(file, v, "workload"));
        } else if (key == "set") {
            s.set = key_values(file, v, "set", false, s.marks);
        } else if (key == "timeout") {
            std::string t = scalar(file, v, "timeout");
            try {
                s.timeout_s = parse_timeout_seconds(t);
            } catch (const UnitError& e) {
                fail(file, v, std::string("timeout: ") + e.what() + " (e.g. 600 s)");
            }
        } else if (key == "grid") {
            if (!v.IsMap())
                fail(file, v, "grid must be a map of section.key: values");
            for (auto a = v.begin(); a != v.end(); ++a) {
                std::string k = a->first.as<std::string>();
                check_key(file, a->first, k, true);
                add_axis_key(a->first, k);
                s.marks.emplace(k, mark_of(file, a->first));
                AxisGroup g;
                g.axes.push_back({k, values_of(file, a->second, k)});
                s.groups.push_back(std::move(g));
            }
        } else if (key == "zip") {
            std::vector<YAML::Node> blocks;
            if (v.IsMap())
                blocks.push_back(v);
            else if (v.IsSequence())
                for (const auto& b : v)
                    blocks.push_back(b);
            else
                fail(file, v, "zip must be a map of section.key: values (or a list of such maps)");
            for (auto& b : blocks) {
                if (!b.IsMap())
                    fail(file, b, "each zip block is a map of section.key: values");
                AxisGroup g;
                g.zip = true;
                for (auto a = b.begin(); a != b.end(); ++a) {
                    std::string k = a->first.as<std::string>();
                    check_key(file, a->first, k, true);
                    add_axis_key(a->first, k);
                    s.marks.emplace(k, mark_of(file, a->first));
                    g.axes.push_back({k, values_of(file, a->second, k)});
                    if (g.axes.back().values.size() != g.axes.front().values.size())
                        fail(file, a->second,
                             fmt::format("zip: '{}' has {} values but '{}' has {}: zipped lists pair up one to one",
                                         k, g.axes.back().values.size(), g.axes.front().key,
                                         g.axes.front().values.size()));
                }
                if (!g.axes.empty())
                    s.groups.push_back(std::move(g));
            }
        } else if (key == "cases") {
            if (!v.IsSequence() || v.size() == 0)
                fail(file, v, "cases must be a non-empty list of {case: LABEL, set: {section.key: value}}");
            add_axis_key(it->first, "case");
            AxisGroup g;
            g.axes.push_back({"case", {}});
            std::set<std::string> labels;
            for (const auto& c : v) {
                if (!c.IsMap() || !c["case"])
                    fail(file, c, "each case needs `case: LABEL` (and usually `set:`)");
                for (auto kv = c.begin(); kv != c.end(); ++kv) {
                    std::string k = kv->first.as<std::string>();
                    if (k != "case" && k != "set")
                        fail(file, kv->first, "unknown case key '" + k + "' (case, set)");
                }
                std::string label = scalar(file, c["case"], "case");
                if (!labels.insert(label).second)
                    fail(file, c["case"], "case '" + label + "' appears twice");
                g.axes[0].values.push_back(label);
                g.case_sets.push_back(c["set"] ? key_values(file, c["set"], "case set", false, s.marks) : KeyValues{});
            }
            s.groups.push_back(std::move(g));
        } else if (key == "overrides") {
            if (!v.IsSequence())
                fail(file, v, "overrides must be a list of {when: {...}, set: {...}}");
            for (const auto& o : v) {
                if (!o.IsMap() || !o["set"])
                    fail(file, o, "each override needs `set:` (and usually `when:`)");
                Override ov;
                for (auto kv = o.begin(); kv != o.end(); ++kv) {
                    std::string k = kv->first.as<std::string>();
                    if (k != "when" && k != "set")
                        fail(file, kv->first, "unknown override key '" + k + "' (when, set)");
                }
                if (o["when"])
                    ov.when = key_values(file, o["when"], "when", true, s.marks);
                ov.set = key_values(file, o["set"], "override set", false, s.marks);
                s.overrides.push_back(std::move(ov));
                for (auto& [k, _] : s.overrides.back().when)
                    if (!axis_keys.count(k))
                        fail(file, o["when"], "when: '" + k + "' is not an axis of this sweep (axes come before "
                                                          "overrides in the file)");
            }
        } else if (key == "plot") {
            std::vector<YAML::Node> plots;
            if (v.IsSequence())
                for (const auto& p : v)
                    plots.push_back(p);
            else
                plots.push_back(v);
            for (auto& p : plots) {
                if (!p.IsMap() || !p["x"] || !p["y"])
                    fail(file, p, "plot needs x and y (and optionally hue, logx, logy, title, file)");
                PlotSpec ps;
                const std::string id = "plot" + std::to_string(s.plots.size());
                for (auto kv = p.begin(); kv != p.end(); ++kv) {
                    std::string k = kv->first.as<std::string>();
                    YAML::Node pv = kv->second;
                    if (k == "x" || k == "hue" || k == "file")
                        s.marks[id + "." + k] = mark_of(file, pv);
                    if (k == "x")
                        ps.x = scalar(file, pv, "plot.x");
                    else if (k == "hue")
                        ps.hue = scalar(file, pv, "plot.hue");
                    else if (k == "title")
                        ps.title = scalar(file, pv, "plot.title");
                    else if (k == "file") {
                        ps.file = scalar(file, pv, "plot.file");
                        if (!inside_output(ps.file))
                            fail(file, pv, "plot.file '" + ps.file + "' must be a relative path inside the output "
                                                                     "directory (no leading /, no ..)");
                    }
                    else if (k == "logx" || k == "logy") {
                        try {
                            (k == "logx" ? ps.logx : ps.logy) = pv.as<bool>();
                        } catch (const YAML::Exception&) {
                            fail(file, pv, "plot." + k + " must be true or false");
                        }
                    } else if (k == "y") {
                        auto add = [&](const YAML::Node& y) {
                            s.marks[id + ".y" + std::to_string(ps.y.size())] = mark_of(file, y);
                            ps.y.push_back(scalar(file, y, "plot.y"));
                        };
                        if (pv.IsSequence())
                            for (const auto& y : pv)
                                add(y);
                        else
                            add(pv);
                    } else
                        fail(file, kv->first, "unknown plot key '" + k + "' (x, y, hue, logx, logy, title, file)");
                }
                s.plots.push_back(std::move(ps));
            }
        }
    }
    if (s.platform.empty())
        fail(file, doc, "missing key 'platform' (a platform YAML, e.g. ../platforms/trn1.yaml)");
    if (s.testbench.empty())
        fail(file, doc, "missing key 'testbench' (see `nctlm testbenches`)");
    if (s.name.empty())
        s.name = fs::path(file).stem().string();
    return s;
}

std::vector<std::string> Spec::axis_names() const {
    std::vector<std::string> out;
    for (auto& g : groups)
        for (auto& a : g.axes)
            out.push_back(a.key);
    return out;
}

size_t Spec::count_points() const {
    size_t total = 1;
    for (auto& g : groups) {
        if (g.size() && total > SIZE_MAX / g.size())
            return SIZE_MAX;
        total *= g.size();
    }
    return total;
}

std::vector<Point> Spec::points() const {
    size_t total = 1;
    for (auto& g : groups)
        total *= g.size();
    size_t width = std::max<size_t>(4, std::to_string(total ? total - 1 : 0).size());
    std::vector<Point> out;
    out.reserve(total);
    std::vector<size_t> pos(groups.size(), 0);
    for (size_t i = 0; i < total; ++i) {
        // Mixed-radix count: the last group varies fastest.
        size_t rest = i;
        for (size_t g = groups.size(); g-- > 0;) {
            pos[g] = rest % groups[g].size();
            rest /= groups[g].size();
        }
        Point p;
        p.index = i;
        p.id = fmt::format("{:0{}}", i, width);
        p.workload = workload;
        for (auto& [k, v] : set)
            p.sets.push_back(k + "=" + v);
        for (size_t g = 0; g < groups.size(); ++g)
            for (auto& a : groups[g].axes) {
                const std::string& value = a.values[pos[g]];
                p.axes.emplace_back(a.key, value);
                if (!groups[g].case_sets.empty())
                    for (auto& [k, v] : groups[g].case_sets[pos[g]])
                        p.sets.push_back(k + "=" + v);
                else if (a.key == "workload")
                    p.workload = resolve(value);
                else
                    p.sets.push_back(a.key + "=" + value);
            }
        for (auto& o : overrides) {
            bool match = std::all_of(o.when.begin(), o.when.end(), [&](const auto& w) {
                for (auto& [k, v] : p.axes)
                    if (k == w.first)
                        return v == w.second;
                return false;
            });
            if (match)
                for (auto& [k, v] : o.set)
                    p.sets.push_back(k + "=" + v);
        }
        out.push_back(std::move(p));
    }
    return out;
}

Slice Slice::parse(const std::string& text) {
    Slice s;
    auto slash = text.find('/');
    try {
        if (slash == std::string::npos)
            throw std::invalid_argument("no slash");
        size_t used = 0;
        s.index = std::stoul(text.substr(0, slash), &used);
        if (used != slash)
            throw std::invalid_argument("index");
        s.count = std::stoul(text.substr(slash + 1), &used);
        if (used != text.size() - slash - 1)
            throw std::invalid_argument("count");
    } catch (const std::exception&) {
        throw ConfigError("--slice " + text + ": expected I/N, e.g. 0/4");
    }
    if (s.count == 0 || s.index >= s.count)
        throw ConfigError("--slice " + text + ": need 0 <= I < N");
    return s;
}

std::string hash_hex(const std::string& text) {
    uint64_t h = 1469598103934665603ull;
    for (unsigned char c : text) {
        h ^= c;
        h *= 1099511628211ull;
    }
    return fmt::format("{:016x}", h);
}

} // namespace nctlm::sweep
