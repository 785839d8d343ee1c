// A config struct's field list, type-erased: what `nctlm describe`, the JSON Schema, shell
// completion and the describe-vs-`--set` test read. Built from the one field list
// (S::fields()), so it cannot drift from what loading accepts. Pure C++.
#pragma once

#include "models/common/config.h"

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace nctlm {

struct ParamInfo {
    std::string key;                          // without the section: "channels"
    std::string unit, range, doc;
    std::optional<std::string> default_text;  // nullopt: required
};

// One YAML section read with one field list: "dma" with DmaConfig, "workload" with GemmWorkload.
struct ParamSection {
    std::string section;
    std::string what;                                 // one line: which struct / who reads it
    std::function<std::vector<ParamInfo>()> params;
    std::function<std::string()> markdown;            // the describe<S>() table
};

template <class S> ParamSection param_section(const std::string& section, const std::string& what) {
    return {section, what,
            [] {
                std::vector<ParamInfo> out;
                for (auto& f : S::fields())
                    out.push_back({f.key, f.unit, f.range, f.doc, f.default_text});
                return out;
            },
            [section] { return describe<S>(section); }};
}

// JSON Schema (draft 2020-12) of sections: each key a string or number with its unit, range and
// default in the description, unknown keys refused, required keys required. For editors.
nlohmann::json json_schema(const std::vector<ParamSection>& sections, const std::string& title);

} // namespace nctlm
