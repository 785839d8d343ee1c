// Configuration: one field list per config struct drives YAML loading, --set overrides,
// validation messages, the effective-config echo and the parameter tables in docs/models.
//
//   struct DmaConfig { uint32_t queues; ... static const FieldList<DmaConfig>& fields(); };
//   const FieldList<DmaConfig>& DmaConfig::fields() {
//       static const FieldList<DmaConfig> f = {
//           count("queues", &DmaConfig::queues, "16", 1, 64, "queues per engine (Neuron DMA guide)"), ...};
//       return f; }
//
// Pure C++ (yaml-cpp, nlohmann::json): no SystemC.
#pragma once

#include "models/common/units.h"

#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>
#include <yaml-cpp/yaml.h>

namespace nctlm {

// A bad configuration: the message already names file:line:col (or --set) and the key.
struct ConfigError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// The closest candidate to `word` if it is a plausible typo of it, else "".
std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates);

// Where a parameter's value comes from (docs/calibration.md, docs/sensitivity.md). Every field of a
// platform section states one where it is declared, by chaining onto its builder:
//   duration("controller_latency", &C::controller_latency, nullptr, "...").documented("JEDEC HBM2 timing"),
//   count("hop_cycles", &C::hop_cycles, nullptr, 0, 1000, "...").assumed("4..20", "no public NoC figure"),
// measured: read off silicon by someone (a trace, a benchmark row); documented: a published figure
// (datasheet, vendor guide, JEDEC); calibrated: fitted so a model figure matches a reference
// measurement; assumed: chosen as plausible, no source. `setting` marks a switch of the simulator or
// the experiment (not a claim about hardware). Calibrated and assumed numeric fields also give a
// plausible range: absolute in the field's unit ("4..20", "2 GB/s..8 GB/s") or relative to the
// platform's value ("x0.5..x2", "-20%..+20%"); `nctlm sensitivity` and `nctlm uncertainty` use it.
// tests/unit/test_provenance.cpp fails for any platform field without a provenance.
enum class Provenance { unset, measured, documented, calibrated, assumed, setting };
const char* provenance_name(Provenance p);

template <class S> struct Field {
    std::string key;
    std::string unit;                          // "count", "bytes", "GB/s"... for docs
    std::optional<std::string> default_text;   // YAML text; nullopt: the key is required
    std::string range;                         // "1..64", "on_accept|on_response", ""
    std::string doc;                           // meaning and source, one line
    std::function<void(S&, const YAML::Node&)> load;  // parses and range-checks; throws
    std::function<nlohmann::json(const S&)> show;
    Provenance provenance = Provenance::unset;
    std::string source;                        // where the value comes from (document, measurement, fit)
    std::string plausible;                     // calibrated/assumed: the range the truth plausibly lies in

    Field(std::string key_, std::string unit_, std::optional<std::string> default_, std::string range_,
          std::string doc_, std::function<void(S&, const YAML::Node&)> load_,
          std::function<nlohmann::json(const S&)> show_)
        : key(std::move(key_)), unit(std::move(unit_)), default_text(std::move(default_)), range(std::move(range_)),
          doc(std::move(doc_)), load(std::move(load_)), show(std::move(show_)) {}

    Field measured(std::string src) && { return std::move(*this).origin(Provenance::measured, "", std::move(src)); }
    Field documented(std::string src) && {
        return std::move(*this).origin(Provenance::documented, "", std::move(src));
    }
    Field calibrated(std::string range, std::string src) && {
        return std::move(*this).origin(Provenance::calibrated, std::move(range), std::move(src));
    }
    Field assumed(std::string range, std::string src) && {
        return std::move(*this).origin(Provenance::assumed, std::move(range), std::move(src));
    }
    Field setting(std::string why) && { return std::move(*this).origin(Provenance::setting, "", std::move(why)); }

private:
    Field origin(Provenance p, std::string range, std::string src) && {
        provenance = p;
        plausible = std::move(range);
        source = std::move(src);
        return std::move(*this);
    }
};
template <class S> using FieldList = std::vector<Field<S>>;

// Reads one YAML document from a regular file: duplicate keys, non-scalar keys and a second
// document are ConfigErrors naming file:line:col (yaml-cpp would silently keep or drop them).
YAML::Node load_yaml_file(const std::string& path);
YAML::Node load_yaml_stream(std::istream& in, const std::string& name);  // the same checks, no file

// The whole configuration of one run: the platform file, an optional workload file merged over
// it, then --set overrides. Remembers where every key came from, for error messages.
class ConfigTree {
public:
    ConfigTree() = default;
    // A copy owns its own YAML tree: a YAML::Node copy shares one, so a --set on the copy would
    // change the original (found by the fuzzers, which copy one base tree per input).
    ConfigTree(const ConfigTree& other);
    ConfigTree& operator=(const ConfigTree& other);
    ConfigTree(ConfigTree&&) = default;
    ConfigTree& operator=(ConfigTree&&) = default;

    static ConfigTree from_file(const std::string& path);  // throws ConfigError
    // e.g. a workload file. A file whose top level has `extends: OTHER` (a file name beside it,
    // ".yaml" implied) is OTHER merged first, then its own sections over it.
    void merge_file(const std::string& path);
    void merge_document(const YAML::Node& doc, const std::string& name);  // from load_yaml_*
    void set(const std::string& assignment);                // "dma.channels=4"

    // Reads section `name` with the struct's field list; unknown, missing, badly-united and
    // out-of-range keys are ConfigErrors naming file:line:col and the key.
    template <class S> S load(const std::string& name) const;

    // Throws on top-level sections that nobody reads.
    void check_sections(const std::vector<std::string>& known) const;

    // A section read without a field list (a kernel program's arguments): its values join the
    // effective echo like a loaded section's, so the run can be replayed and check_all_read knows
    // the section was read.
    void record(const std::string& section, const nlohmann::json& values) const { effective_[section] = values; }

    // Effective values of every section loaded so far, in file order.
    const nlohmann::json& effective() const { return effective_; }
    std::string effective_yaml() const;

    // "file:line:col" or "--set key" for the node at section.key.
    std::string where(const std::string& section, const std::string& key) const;
    // Where to point a message about section.key that names other keys too ("hbm.t_ras (34 ns) is
    // shorter than hbm.t_rcd"): a --set among the keys it names is what the user just changed, so
    // it wins over the file line of section.key.
    std::string blame(const std::string& section, const std::string& key, const std::string& message) const;
    // Throws for a section present in the tree that no field list read (a workload given to a
    // testbench that reads none, `--set workload.m=5` on probe): `reader` names who read the rest.
    void check_all_read(const std::string& reader, const std::string& hint) const;
    const YAML::Node& root() const { return root_; }

private:
    YAML::Node root_ = YAML::Node(YAML::NodeType::Map);
    std::map<std::string, std::string> origin_;  // "section" or "section.key" -> "file:line:col" or "--set ..."
    std::vector<std::string> set_keys_;          // "section.key" of each --set, in order
    std::string first_file_;                     // where a section nobody wrote belongs
    mutable nlohmann::json effective_ = nlohmann::json::object();
    [[noreturn]] void fail(const std::string& section, const std::string& key, const std::string& msg) const;
    void merge_file(const std::string& path, int depth);
    void merge_sections(const YAML::Node& doc, const std::string& name, bool skip_extends);
};

// ---- field builders -------------------------------------------------------------------------

namespace detail {
std::string scalar_text(const YAML::Node& n);  // throws UnitError if not a scalar
uint64_t parse_count(const std::string& text);
double parse_real(const std::string& text);
bool parse_flag(const std::string& text);
void check_range(double value, double lo, double hi, const std::string& shown);
// The same in integers: 2^63 must not pass a 2^63 - 1 bound by rounding to the same double.
void check_count(uint64_t value, uint64_t lo, uint64_t hi, const std::string& shown);
} // namespace detail

template <class S, class T>
Field<S> count(const char* key, T S::*m, const char* def, uint64_t lo, uint64_t hi, const char* doc) {
    return {key, "count", def ? std::optional<std::string>(def) : std::nullopt,
            std::to_string(lo) + ".." + std::to_string(hi), doc,
            [=](S& s, const YAML::Node& n) {
                uint64_t v = detail::parse_count(detail::scalar_text(n));
                detail::check_count(v, lo, hi, std::to_string(v));
                s.*m = static_cast<T>(v);
            },
            [=](const S& s) { return nlohmann::json(s.*m); }};
}

template <class S>
Field<S> real(const char* key, double S::*m, const char* def, double lo, double hi, const char* doc) {
    return {key, "number", def ? std::optional<std::string>(def) : std::nullopt,
            nlohmann::json(lo).dump() + ".." + nlohmann::json(hi).dump(), doc,
            [=](S& s, const YAML::Node& n) {
                double v = detail::parse_real(detail::scalar_text(n));
                detail::check_range(v, lo, hi, nlohmann::json(v).dump());
                s.*m = v;
            },
            [=](const S& s) { return nlohmann::json(s.*m); }};
}

template <class S>
Field<S> bytes(const char* key, uint64_t S::*m, const char* def, uint64_t lo, uint64_t hi, const char* doc) {
    return {key, "bytes", def ? std::optional<std::string>(def) : std::nullopt,
            format_bytes(lo) + ".." + format_bytes(hi), doc,
            [=](S& s, const YAML::Node& n) {
                uint64_t v = parse_bytes(detail::scalar_text(n));
                detail::check_count(v, lo, hi, format_bytes(v));
                s.*m = v;
            },
            [=](const S& s) { return nlohmann::json(format_bytes(s.*m)); }};
}

template <class S> Field<S> frequency(const char* key, Frequency S::*m, const char* def, const char* doc) {
    return {key, "Hz", def ? std::optional<std::string>(def) : std::nullopt, "> 0", doc,
            [=](S& s, const YAML::Node& n) { s.*m = parse_frequency(detail::scalar_text(n)); },
            [=](const S& s) { return nlohmann::json(format_frequency(s.*m)); }};
}

// min_bytes_per_s > 0: a floor below which the rate is implausible (and a run would crawl).
template <class S>
Field<S> bandwidth(const char* key, Bandwidth S::*m, const char* def, const char* doc, double min_bytes_per_s = 0) {
    return {key, "B/s", def ? std::optional<std::string>(def) : std::nullopt,
            min_bytes_per_s > 0 ? format_bandwidth(Bandwidth{min_bytes_per_s}) + ".." : "> 0", doc,
            [=](S& s, const YAML::Node& n) {
                Bandwidth b = parse_bandwidth(detail::scalar_text(n));
                if (b.bytes_per_s < min_bytes_per_s)
                    throw UnitError(format_bandwidth(b) + " is below the plausible minimum " +
                                    format_bandwidth(Bandwidth{min_bytes_per_s}));
                s.*m = b;
            },
            [=](const S& s) { return nlohmann::json(format_bandwidth(s.*m)); }};
}

template <class S>
Field<S> duration(const char* key, Duration S::*m, const char* def, const char* doc, double max_ns = 1e15) {
    return {key, "s", def ? std::optional<std::string>(def) : std::nullopt,
            max_ns < 1e15 ? "0 ns.." + format_duration(Duration(max_ns)) : "0..", doc,
            [=](S& s, const YAML::Node& n) {
                Duration d = parse_duration(detail::scalar_text(n));
                if (d.ns < 0 || d.ns > max_ns)  // the range with units, as the user writes them
                    throw UnitError(format_duration(d) + " is out of range [0 s .. " +
                                    format_duration(Duration(max_ns)) + "]");
                s.*m = d;
            },
            [=](const S& s) { return nlohmann::json(format_duration(s.*m)); }};
}

template <class S> Field<S> flag(const char* key, bool S::*m, const char* def, const char* doc) {
    return {key, "bool", def ? std::optional<std::string>(def) : std::nullopt, "true|false", doc,
            [=](S& s, const YAML::Node& n) { s.*m = detail::parse_flag(detail::scalar_text(n)); },
            [=](const S& s) { return nlohmann::json(s.*m); }};
}

template <class S> Field<S> text(const char* key, std::string S::*m, const char* def, const char* doc) {
    return {key, "text", def ? std::optional<std::string>(def) : std::nullopt, "", doc,
            [=](S& s, const YAML::Node& n) { s.*m = detail::scalar_text(n); },
            [=](const S& s) { return nlohmann::json(s.*m); }};
}

// An enumeration spelled as words in YAML.
template <class S, class E>
Field<S> choice(const char* key, E S::*m, std::vector<std::pair<std::string, E>> options, const char* def,
                const char* doc) {
    std::string range;
    std::vector<std::string> names;
    for (auto& [name, _] : options) {
        range += (range.empty() ? "" : "|") + name;
        names.push_back(name);
    }
    return {key, "choice", def ? std::optional<std::string>(def) : std::nullopt, range, doc,
            [=](S& s, const YAML::Node& n) {
                std::string word = detail::scalar_text(n);
                for (auto& [name, value] : options)
                    if (name == word) {
                        s.*m = value;
                        return;
                    }
                std::string hint = did_you_mean(word, names);
                throw UnitError("'" + word + "' is not one of " + range +
                                (hint.empty() ? "" : "; did you mean '" + hint + "'?"));
            },
            [=](const S& s) {
                for (auto& [name, value] : options)
                    if (value == s.*m)
                        return nlohmann::json(name);
                return nlohmann::json(nullptr);
            }};
}

// ---- loading --------------------------------------------------------------------------------

template <class S> S ConfigTree::load(const std::string& name) const {
    const FieldList<S>& fields = S::fields();
    S out{};
    YAML::Node section = root_[name];
    if (section && !section.IsMap() && !section.IsNull())
        fail(name, "", "section '" + name + "' must be a map of keys");
    std::vector<std::string> names;
    for (auto& f : fields)
        names.push_back(f.key);
    if (section && section.IsMap())
        for (auto it = section.begin(); it != section.end(); ++it) {
            std::string key = it->first.Scalar();
            bool known = false;
            for (auto& f : fields)
                known = known || f.key == key;
            if (!known) {
                std::string hint = did_you_mean(key, names);
                std::string all;  // listed even with a did-you-mean: the guess may be wrong
                for (auto& n : names)
                    all += (all.empty() ? "" : ", ") + n;
                fail(name, key,
                     "unknown key '" + name + "." + key + "'" + (hint.empty() ? "" : "; did you mean '" + hint + "'?") +
                         " (known: " + all + ")");
            }
        }
    nlohmann::json echo = nlohmann::json::object();
    for (auto& f : fields) {
        const bool present = section && section.IsMap() && section[f.key];
        YAML::Node value = present ? section[f.key] : YAML::Node();
        try {
            if (present && value.IsNull())  // `key:` or `key: ~` would silently mean "the default"
                fail(name, f.key, "key '" + name + "." + f.key + "' has no value (YAML null); give one (" + f.doc +
                                      ") or remove the line for the default" +
                                      (f.default_text ? " (" + *f.default_text + ")" : ""));
            if (present)
                f.load(out, value);
            else if (f.default_text)
                f.load(out, YAML::Node(*f.default_text));
            else
                fail(name, "", "missing key '" + name + "." + f.key + "' (" + f.doc + ")");
        } catch (const UnitError& e) {
            fail(name, f.key, "key '" + name + "." + f.key + "': " + e.what());
        }
        echo[f.key] = f.show(out);
    }
    effective_[name] = echo;
    return out;
}

// A field without its struct: what describe, the provenance check, `nctlm sensitivity` and
// `nctlm uncertainty` need to know about a parameter.
struct FieldInfo {
    std::string section, key, unit, default_text, range, doc;
    Provenance provenance = Provenance::unset;
    std::string source, plausible;
    std::string name() const { return section + "." + key; }
    bool numeric() const;  // count, number, bytes, Hz, B/s, s: can be scaled
};

template <class S> std::vector<FieldInfo> field_infos(const std::string& section) {
    std::vector<FieldInfo> out;
    for (auto& f : S::fields())
        out.push_back({section, f.key, f.unit, f.default_text ? *f.default_text : "required", f.range, f.doc,
                       f.provenance, f.source, f.plausible});
    return out;
}

// A numeric field's value as echoed in the effective config ("25.6 GB/s", 16, "2 KiB") in base
// units (bytes/s, Hz, ns, bytes, count); and a value back to YAML text (counts rounded).
double numeric_value(const FieldInfo& f, const nlohmann::json& shown);
std::string numeric_text(const FieldInfo& f, double value);
// The plausible range {lo, hi} of a calibrated/assumed field around the platform's value, in the
// units of numeric_value. Throws ConfigError naming the field if the range text is malformed.
std::pair<double, double> plausible_bounds(const FieldInfo& f, double value);

// Markdown table of field lists: name, unit, default, range, provenance, meaning, source.
std::string describe_table(const std::vector<FieldInfo>& fields);
template <class S> std::string describe(const std::string& section) {
    return describe_table(field_infos<S>(section));
}

} // namespace nctlm
