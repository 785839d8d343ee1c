#include "models/common/config.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fmt/format.h>
#include <fstream>

namespace nctlm {

std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates) {
    auto distance = [](const std::string& a, const std::string& b) {
        std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
        for (size_t j = 0; j <= b.size(); ++j)
            prev[j] = j;
        for (size_t i = 1; i <= a.size(); ++i) {
            cur[0] = i;
            for (size_t j = 1; j <= b.size(); ++j)
                cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1])});
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
    return std::strtoull(text.c_str(), nullptr, 10);
}

double parse_real(const std::string& text) {
    char* end = nullptr;
    double v = std::strtod(text.c_str(), &end);
    if (end == text.c_str() || *end != '\0' || !std::isfinite(v))
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

} // namespace detail

namespace {
YAML::Node load_yaml(const std::string& path) {
    std::ifstream in(path);
    if (!in)
        throw ConfigError(path + ": cannot open file");
    try {
        return YAML::Load(in);
    } catch (const YAML::Exception& e) {
        throw ConfigError(fmt::format("{}:{}:{}: YAML syntax error: {}", path, e.mark.line + 1, e.mark.column + 1,
                                      e.msg));
    }
}
} // namespace

ConfigTree ConfigTree::from_file(const std::string& path) {
    ConfigTree t;
    t.merge_file(path);
    return t;
}

void ConfigTree::merge_file(const std::string& path) {
    YAML::Node doc = load_yaml(path);
    if (doc.IsNull())
        return;
    if (!doc.IsMap())
        throw ConfigError(fmt::format("{}:{}:{}: the top level must be a map of sections", path,
                                      doc.Mark().line + 1, doc.Mark().column + 1));
    for (auto it = doc.begin(); it != doc.end(); ++it) {
        std::string section = it->first.as<std::string>();
        YAML::Node body = it->second;
        if (!root_[section] || !root_[section].IsMap() || !body.IsMap()) {
            root_[section] = body;
            origin_[section] = path;
            continue;
        }
        for (auto kv = body.begin(); kv != body.end(); ++kv) {
            std::string key = kv->first.as<std::string>();
            root_[section][key] = kv->second;
            origin_[section + "." + key] = path;
        }
    }
}

void ConfigTree::set(const std::string& assignment) {
    auto eq = assignment.find('=');
    auto dot = assignment.find('.');
    if (eq == std::string::npos || dot == std::string::npos || dot > eq || dot == 0 || eq == dot + 1)
        throw ConfigError("--set " + assignment + ": expected section.key=value, e.g. dma.channels=4");
    std::string section = assignment.substr(0, dot);
    std::string key = assignment.substr(dot + 1, eq - dot - 1);
    std::string value = assignment.substr(eq + 1);
    if (key.find('.') != std::string::npos)
        throw ConfigError("--set " + assignment + ": sections are one level deep (section.key=value)");
    if (!root_[section] || !root_[section].IsMap()) {
        root_[section] = YAML::Node(YAML::NodeType::Map);
        origin_[section] = "--set " + assignment;
    }
    root_[section][key] = value;
    origin_[section + "." + key] = "--set " + assignment;
}

std::string ConfigTree::where(const std::string& section, const std::string& key) const {
    std::string path = key.empty() ? section : section + "." + key;
    auto it = origin_.find(path);
    if (it == origin_.end())
        it = origin_.find(section);
    std::string file = it == origin_.end() ? "<defaults>" : it->second;
    if (file.rfind("--set", 0) == 0)
        return file;
    YAML::Node node = root_[section];
    YAML::Mark mark;
    if (node && node.IsMap() && !key.empty() && node[key]) {
        // The key's own mark: find the key node itself.
        for (auto kv = node.begin(); kv != node.end(); ++kv)
            if (kv->first.as<std::string>() == key)
                mark = kv->first.Mark();
    } else if (node) {
        mark = node.Mark();
    }
    if (mark.is_null())
        return file;
    return fmt::format("{}:{}:{}", file, mark.line + 1, mark.column + 1);
}

void ConfigTree::fail(const std::string& section, const std::string& key, const std::string& msg) const {
    throw ConfigError(where(section, key) + ": " + msg);
}

void ConfigTree::check_sections(const std::vector<std::string>& known) const {
    for (auto it = root_.begin(); it != root_.end(); ++it) {
        std::string section = it->first.as<std::string>();
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

} // namespace nctlm
