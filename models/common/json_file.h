// Reading JSON documents the way every loader here does: the file ("PATH: cannot open file",
// "PATH: not valid JSON: ..."), and the checks of a document's values with errors naming the file
// and the JSON path ("FILE: /ops/3/op: ..."), thrown as the loader's own error type. Pure C++.
#pragma once

#include "models/common/config.h"

#include <algorithm>
#include <fmt/format.h>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace nctlm {

template <class Error>
nlohmann::json read_json_file(const std::string& path, const std::string& cannot_open = "cannot open file") {
    std::ifstream in(path);
    if (!in)
        throw Error(path + ": " + cannot_open);
    try {
        return nlohmann::json::parse(in);
    } catch (const nlohmann::json::parse_error& e) {
        throw Error(path + ": not valid JSON: " + e.what());
    }
}

// The checks a JSON loader makes of the values it reads; Error(message) is thrown.
template <class Error>
class JsonReader {
public:
    explicit JsonReader(std::string file) : file_(std::move(file)) {}

protected:
    using json = nlohmann::json;
    [[noreturn]] void fail(const std::string& path, const std::string& msg) const {
        throw Error(fmt::format("{}: {}: {}", file_, path.empty() ? "/" : path, msg));
    }
    // Every key of object `j` is one of `known` (else: unknown key, with a did-you-mean).
    void check_keys(const json& j, const std::string& path, const std::vector<std::string>& known) const {
        for (auto& [k, v] : j.items()) {
            (void)v;
            if (std::find(known.begin(), known.end(), k) == known.end()) {
                std::string hint = did_you_mean(k, known);
                fail(path, "unknown key '" + k + "'" + (hint.empty() ? "" : "; did you mean '" + hint + "'?"));
            }
        }
    }
    const json& field(const json& j, const std::string& key, const std::string& path) const {
        if (!j.contains(key))
            fail(path, "missing key '" + key + "'");
        return j[key];
    }
    const json& array(const json& j, const std::string& path) const {
        if (!j.is_array())
            fail(path, "expected a list");
        return j;
    }
    std::string string(const json& j, const std::string& path) const {
        if (!j.is_string())
            fail(path, "expected a string");
        return j.get<std::string>();
    }
    // A JSON integer in [lo, hi] (signed or unsigned in the parser's eyes); `what` when it is not.
    uint64_t whole(const json& j, const std::string& path, int64_t lo, int64_t hi, const char* what) const {
        if (!j.is_number_integer() || (j.is_number_unsigned() ? j.get<uint64_t>() > uint64_t(hi)
                                                               : j.get<int64_t>() < lo || j.get<int64_t>() > hi))
            fail(path, what);
        return j.get<uint64_t>();
    }

    std::string file_;
};

} // namespace nctlm
