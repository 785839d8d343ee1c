#include "models/common/config.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fmt/format.h>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <yaml-cpp/eventhandler.h>
#include <map>

namespace nctlm {

std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates) {
    // Edit distance counting a swap of two neighbours as one edit (optimal string alignment): the
    // commonest typo, "hmb" for "hbm", is one edit from it and two from "dma".
    auto distance = [](const std::string& a, const std::string& b) {
        std::vector<size_t> before(b.size() + 1), prev(b.size() + 1), cur(b.size() + 1);
        for (size_t j = 0; j <= b.size(); ++j)
            prev[j] = j;
        for (size_t i = 1; i <= a.size(); ++i) {
            cur[0] = i;
            for (size_t j = 1; j <= b.size(); ++j) {
                cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1])});
                if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                    cur[j] = std::min(cur[j], before[j - 2] + 1);
            }
            std::swap(before, prev);
            std::swap(prev, cur);
        }
        return prev[b.size()];
    };
    std::string best;
    size_t best_d = std::max<size_t>(2, word.size() / 3) + 1;
    for (auto& c : candidates) {
        size_t d = distance(word, c);
        if (d < best_d) {
            best_d = d;
            best = c;
        }
    }
    return best;
}

namespace detail {

std::string scalar_text(const YAML::Node& n) {
    if (!n.IsScalar())
        throw UnitError("expected a single value, found a " + std::string(n.IsMap() ? "map" : "list"));
    return n.Scalar();
}

uint64_t parse_count(const std::string& text) {
    if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
        throw UnitError("'" + text + "' is not a whole number");
    errno = 0;
    uint64_t v = std::strtoull(text.c_str(), nullptr, 10);
    if (errno == ERANGE)  // strtoull clamps to 2^64 - 1
        throw UnitError("'" + text + "' is too large (a count must be below 2^64)");
    return v;
}

double parse_real(const std::string& text) {
    char* end = nullptr;
    errno = 0;
    double v = std::strtod(text.c_str(), &end);
    if (end == text.c_str() || *end != '\0' || !std::isfinite(v) || (errno == ERANGE && std::fabs(v) > 1))
        throw UnitError("'" + text + "' is not a number");
    return v;
}

bool parse_flag(const std::string& text) {
    if (text == "true" || text == "yes" || text == "on")
        return true;
    if (text == "false" || text == "no" || text == "off")
        return false;
    throw UnitError("'" + text + "' is not true or false");
}

void check_range(double value, double lo, double hi, const std::string& shown) {
    if (value < lo || value > hi)
        throw UnitError(fmt::format("{} is out of range [{} .. {}]", shown, lo, hi));
}

void check_count(uint64_t value, uint64_t lo, uint64_t hi, const std::string& shown) {
    if (value < lo || value > hi)
        throw UnitError(fmt::format("{} is out of range [{} .. {}]", shown, lo, hi));
}

} // namespace detail

namespace {
std::string at_mark(const std::string& path, const YAML::Mark& m) {
    return fmt::format("{}:{}:{}", path, m.line + 1, m.column + 1);
}

// yaml-cpp keeps duplicate keys (node[key] then answers the first) and accepts any node as a key;
// both silently drop what the user wrote, so every map in the file is checked.
void check_keys(const std::string& path, const YAML::Node& node, int depth = 0) {
    if (depth > 64)
        throw ConfigError(at_mark(path, node.Mark()) + ": nesting deeper than 64 levels");
    if (node.IsSequence())
        for (auto it = node.begin(); it != node.end(); ++it)
            check_keys(path, *it, depth + 1);
    if (!node.IsMap())
        return;
    std::map<std::string, YAML::Mark> seen;
    for (auto it = node.begin(); it != node.end(); ++it) {
        YAML::Node key = it->first;  // a copy: it-> yields a temporary (ASan: stack-use-after-scope)
        if (!key.IsScalar())
            throw ConfigError(at_mark(path, key.Mark()) + ": a key must be a plain word, not a " +
                              (key.IsMap() ? "map" : key.IsSequence() ? "list" : "null"));
        auto [first, fresh] = seen.emplace(key.Scalar(), key.Mark());
        if (!fresh)
            throw ConfigError(fmt::format("{}: duplicate key '{}' (first at line {})", at_mark(path, key.Mark()),
                                          key.Scalar(), first->second.line + 1));
        check_keys(path, it->second, depth + 1);
    }
}
// Records where a document starts; ignores the rest.
struct DocumentStarts : YAML::EventHandler {
    bool seen = false;
    YAML::Mark mark;
    void OnDocumentStart(const YAML::Mark& m) override {
        seen = true;
        mark = m;
    }
    void OnDocumentEnd() override {}
    void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
    void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
    void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
    void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
    void OnSequenceEnd() override {}
    void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
    void OnMapEnd() override {}
};
} // namespace

YAML::Node load_yaml_file(const std::string& path) {
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::file_status st = fs::status(path, ec);
    if (ec || !fs::exists(st))
        throw ConfigError(path + ": cannot open file");
    // A directory reads as a stream error and a FIFO blocks: only a regular file is a config.
    if (fs::is_directory(st))
        throw ConfigError(path + ": is a directory, not a YAML file");
    if (!fs::is_regular_file(st))
        throw ConfigError(path + ": is not a regular file (a FIFO or device cannot be a config)");
    std::ifstream in(path);
    if (!in)
        throw ConfigError(path + ": cannot open file");
    return load_yaml_stream(in, path);
}

YAML::Node load_yaml_stream(std::istream& in, const std::string& path) {
    std::string text((std::istreambuf_iterator<char>(in)), {});
    YAML::Node doc;
    try {
        // Documents are counted with the event parser, at most two: YAML::LoadAll never returns
        // on input such as "," (each call yields another empty document; found by fuzz_config).
        std::istringstream events(text);
        YAML::Parser parser(events);
        DocumentStarts first, second;
        if (parser.HandleNextDocument(first) && parser.HandleNextDocument(second) && second.seen)
            throw ConfigError(at_mark(path, second.mark) +
                              ": a second YAML document ('---'); a config is one document");
        doc = YAML::Load(text);
    } catch (const YAML::Exception& e) {
        throw ConfigError(fmt::format("{}: YAML syntax error: {}", at_mark(path, e.mark), e.msg));
    }
    check_keys(path, doc);
    return doc;
}

ConfigTree::ConfigTree(const ConfigTree& other)
    : root_(YAML::Clone(other.root_)), origin_(other.origin_), set_keys_(other.set_keys_),
      first_file_(other.first_file_), effective_(other.effective_) {}

ConfigTree& ConfigTree::operator=(const ConfigTree& other) {
    if (this != &other)
        *this = ConfigTree(other);
    return *this;
}

ConfigTree ConfigTree::from_file(const std::string& path) {
    ConfigTree t;
    t.merge_file(path);
    return t;
}

void ConfigTree::merge_file(const std::string& path) { merge_file(path, 0); }

void ConfigTree::merge_file(const std::string& path, int depth) {
    YAML::Node doc = load_yaml_file(path);
    if (first_file_.empty())
        first_file_ = path;
    if (doc.IsMap() && doc["extends"]) {
        const YAML::Node base = doc["extends"];
        if (!base.IsScalar() || base.Scalar().empty())
            throw ConfigError(at_mark(path, base.Mark()) + ": 'extends' names one file (e.g. extends: trn2)");
        if (depth >= 8)
            throw ConfigError(at_mark(path, base.Mark()) + ": 'extends' nests more than 8 files deep (a cycle?)");
        std::filesystem::path file = std::filesystem::path(path).parent_path() / base.Scalar();
        if (!file.has_extension())
            file += ".yaml";
        merge_file(file.string(), depth + 1);
    }
    merge_sections(doc, path, true);
}

void ConfigTree::merge_document(const YAML::Node& doc, const std::string& path) { merge_sections(doc, path, false); }

void ConfigTree::merge_sections(const YAML::Node& doc, const std::string& path, bool skip_extends) {
    if (first_file_.empty())
        first_file_ = path;
    if (doc.IsNull())
        return;
    if (!doc.IsMap())
        throw ConfigError(fmt::format("{}: the top level must be a map of sections", at_mark(path, doc.Mark())));
    for (auto it = doc.begin(); it != doc.end(); ++it) {
        std::string section = it->first.Scalar();
        if (skip_extends && section == "extends")
            continue;
        YAML::Node body = it->second;
        if (!root_[section] || !root_[section].IsMap() || !body.IsMap()) {
            root_[section] = body;
            // A replaced section forgets where its old keys came from.
            for (auto o = origin_.lower_bound(section + "."); o != origin_.end() && o->first.rfind(section + ".", 0) == 0;)
                o = origin_.erase(o);
            origin_[section] = at_mark(path, it->first.Mark());
            if (body.IsMap())
                for (auto kv = body.begin(); kv != body.end(); ++kv)
                    origin_[section + "." + kv->first.Scalar()] = at_mark(path, kv->first.Mark());
            continue;
        }
        for (auto kv = body.begin(); kv != body.end(); ++kv) {
            std::string key = kv->first.Scalar();
            root_[section][key] = kv->second;
            // The key's own file and line: the platform's node for it is not the one that wins.
            origin_[section + "." + key] = at_mark(path, kv->first.Mark());
        }
    }
}

void ConfigTree::set(const std::string& assignment) {
    auto trim = [](std::string t) {
        const char* ws = " \t\r\n";
        t.erase(0, t.find_first_not_of(ws));
        t.erase(t.find_last_not_of(ws) + 1);
        return t;
    };
    auto eq = assignment.find('=');
    auto dot = assignment.find('.');
    if (eq == std::string::npos || dot == std::string::npos || dot > eq)
        throw ConfigError("--set " + assignment + ": expected section.key=value, e.g. dma.channels=4");
    // "k = v" means k=v: spaces around the names and the value are not part of them.
    std::string section = trim(assignment.substr(0, dot));
    std::string key = trim(assignment.substr(dot + 1, eq - dot - 1));
    std::string value = trim(assignment.substr(eq + 1));
    if (section.empty() || key.empty())
        throw ConfigError("--set " + assignment + ": expected section.key=value, e.g. dma.channels=4");
    if (key.find('.') != std::string::npos)
        throw ConfigError("--set " + assignment + ": sections are one level deep (section.key=value)");
    if (!root_[section] || !root_[section].IsMap()) {
        root_[section] = YAML::Node(YAML::NodeType::Map);
        origin_[section] = "--set " + assignment;
    }
    root_[section][key] = value;
    origin_[section + "." + key] = "--set " + assignment;
    set_keys_.push_back(section + "." + key);
}

std::string ConfigTree::where(const std::string& section, const std::string& key) const {
    auto it = key.empty() ? origin_.end() : origin_.find(section + "." + key);
    if (it == origin_.end())
        it = origin_.find(section);
    if (it != origin_.end())
        return it->second;
    // Nobody wrote this section: point at the file that should have it, not at <defaults>.
    return first_file_.empty() ? "<no config file>" : first_file_;
}

std::string ConfigTree::blame(const std::string& section, const std::string& key, const std::string& message) const {
    std::string own = where(section, key);
    if (auto it = origin_.find(section + "." + key); it != origin_.end() && it->second.rfind("--set ", 0) == 0)
        return own;
    auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; };
    for (auto it = set_keys_.rbegin(); it != set_keys_.rend(); ++it)
        for (size_t at = message.find(*it); at != std::string::npos; at = message.find(*it, at + 1))
            if ((at == 0 || !word(message[at - 1])) &&
                (at + it->size() == message.size() || !word(message[at + it->size()]) ||
                 (message[at + it->size()] == '.' &&
                  (at + it->size() + 1 == message.size() || !word(message[at + it->size() + 1])))))
                return origin_.at(*it);
    return own;
}

void ConfigTree::check_all_read(const std::string& reader, const std::string& hint) const {
    for (auto it = root_.begin(); it != root_.end(); ++it) {
        std::string section = it->first.Scalar();
        if (!effective_.contains(section))
            fail(section, "", reader + " reads no '" + section + "' keys, so " + section + ".* would be ignored" +
                                  (hint.empty() ? "" : " (" + hint + ")"));
    }
}

void ConfigTree::fail(const std::string& section, const std::string& key, const std::string& msg) const {
    throw ConfigError(where(section, key) + ": " + msg);
}

void ConfigTree::check_sections(const std::vector<std::string>& known) const {
    for (auto it = root_.begin(); it != root_.end(); ++it) {
        std::string section = it->first.Scalar();
        if (std::find(known.begin(), known.end(), section) == known.end()) {
            std::string hint = did_you_mean(section, known);
            std::string all;  // listed even with a did-you-mean: the guess may be wrong
            for (auto& k : known)
                all += (all.empty() ? "" : ", ") + k;
            fail(section, "", "unknown section '" + section + "'" +
                                  (hint.empty() ? "" : "; did you mean '" + hint + "'?") + " (known: " + all + ")");
        }
    }
}

std::string ConfigTree::effective_yaml() const {
    YAML::Emitter out;
    out << YAML::BeginMap;
    for (auto& [section, keys] : effective_.items()) {
        out << YAML::Key << section << YAML::Value << YAML::BeginMap;
        for (auto& [k, v] : keys.items()) {
            out << YAML::Key << k << YAML::Value;
            if (v.is_string())
                out << v.get<std::string>();
            else
                out << v.dump();
        }
        out << YAML::EndMap;
    }
    out << YAML::EndMap;
    return std::string(out.c_str()) + "\n";
}

const char* provenance_name(Provenance p) {
    switch (p) {
    case Provenance::measured: return "measured";
    case Provenance::documented: return "documented";
    case Provenance::calibrated: return "calibrated";
    case Provenance::assumed: return "assumed";
    case Provenance::setting: return "setting";
    case Provenance::unset: break;
    }
    return "";
}

bool FieldInfo::numeric() const {
    return unit == "count" || unit == "number" || unit == "bytes" || unit == "Hz" || unit == "B/s" || unit == "s";
}

namespace {
double parse_in_unit(const std::string& unit, const std::string& text) {
    if (unit == "bytes")
        return double(parse_bytes(text));
    if (unit == "Hz")
        return parse_frequency(text).hz;
    if (unit == "B/s")
        return parse_bandwidth(text).bytes_per_s;
    if (unit == "s")
        return parse_duration(text).ns;
    return detail::parse_real(text);
}

std::string trim(std::string s) {
    s.erase(0, s.find_first_not_of(" \t"));
    s.erase(s.find_last_not_of(" \t") + 1);
    return s;
}
} // namespace

double numeric_value(const FieldInfo& f, const nlohmann::json& shown) {
    if (shown.is_number())
        return shown.get<double>();
    if (!shown.is_string())
        throw ConfigError(f.name() + ": not a numeric value: " + shown.dump());
    return parse_in_unit(f.unit, shown.get<std::string>());
}

std::string numeric_text(const FieldInfo& f, double v) {
    if (f.unit == "count" || f.unit == "bytes")
        return fmt::format("{}{}", uint64_t(std::llround(std::max(0.0, v))), f.unit == "bytes" ? " B" : "");
    if (f.unit == "Hz")
        return fmt::format("{:.9g} GHz", v / 1e9);
    if (f.unit == "B/s")
        return fmt::format("{:.9g} GB/s", v / 1e9);
    if (f.unit == "s")
        return fmt::format("{:.9g} ns", v);
    return fmt::format("{:.9g}", v);
}

std::pair<double, double> plausible_bounds(const FieldInfo& f, double value) {
    auto bad = [&](const std::string& why) {
        return ConfigError(f.name() + ": plausible range '" + f.plausible + "' " + why +
                           " (expected 'A..B' in " + f.unit + ", 'xA..xB' or '-P%..+Q%')");
    };
    auto dots = f.plausible.find("..");
    if (dots == std::string::npos)
        throw bad("has no '..'");
    std::string a = trim(f.plausible.substr(0, dots)), b = trim(f.plausible.substr(dots + 2));
    if (a.empty() || b.empty())
        throw bad("has an empty end");
    auto end = [&](const std::string& t) {
        try {
            if (t[0] == 'x')
                return value * detail::parse_real(t.substr(1));
            if (t.back() == '%')
                return value * (1 + detail::parse_real(trim(t.substr(0, t.size() - 1))) / 100);
            return parse_in_unit(f.unit, t);
        } catch (const UnitError& e) {
            throw bad(e.what());
        }
    };
    double lo = end(a), hi = end(b);
    if (!(lo <= hi))
        throw bad("is empty");
    return {lo, hi};
}

std::string describe_table(const std::vector<FieldInfo>& fields) {
    std::string md = "| key | unit | default | range | provenance | meaning | source |\n"
                     "| --- | --- | --- | --- | --- | --- | --- |\n";
    auto cell = [](std::string s) {  // a '|' inside a cell would split it
        for (size_t at = 0; (at = s.find('|', at)) != std::string::npos; at += 2)
            s.replace(at, 1, "\\|");
        return s;
    };
    for (auto& f : fields) {
        std::string prov = f.provenance == Provenance::unset ? "**missing**" : provenance_name(f.provenance);
        if (!f.plausible.empty())
            prov += ", plausible " + f.plausible;
        md += "| `" + f.name() + "` | " + f.unit + " | " + f.default_text + " | " + cell(f.range) + " | " +
              cell(prov) + " | " + cell(f.doc) + " | " + cell(f.source) + " |\n";
    }
    return md;
}

} // namespace nctlm
