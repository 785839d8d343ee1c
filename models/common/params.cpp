#include "models/common/params.h"

namespace nctlm {

nlohmann::json json_schema(const std::vector<ParamSection>& sections, const std::string& title) {
    using json = nlohmann::json;
    json props = json::object();
    for (auto& s : sections) {
        json keys = json::object(), required = json::array();
        for (auto& p : s.params()) {
            json k;
            // Quantities carry units as text ("32 KiB", "1.4 GHz"); plain counts may be numbers.
            if (p.unit == "count" || p.unit == "number")
                k["type"] = json::array({"integer", "number", "string"});
            else if (p.unit == "bool")
                k["type"] = json::array({"boolean", "string"});
            else
                k["type"] = json::array({"string", "number"});
            if (p.unit == "choice" || p.unit == "bool") {
                json words = json::array();
                std::string r = p.range;
                for (size_t at = 0; at <= r.size();) {
                    size_t bar = r.find('|', at);
                    if (bar == std::string::npos)
                        bar = r.size();
                    words.push_back(r.substr(at, bar - at));
                    at = bar + 1;
                }
                if (p.unit == "choice")
                    k["enum"] = words;
            }
            std::string desc = p.doc + " [unit: " + p.unit + (p.range.empty() ? "" : ", range: " + p.range) + "]";
            k["description"] = desc;
            if (p.default_text)
                k["default"] = *p.default_text;
            else
                required.push_back(p.key);
            keys[p.key] = k;
        }
        json sec = {{"type", "object"}, {"description", s.what}, {"properties", keys},
                    {"additionalProperties", false}};
        if (!required.empty())
            sec["required"] = required;
        if (props.contains(s.section)) {  // two testbenches read "workload" differently: either
            json& prev = props[s.section];
            if (!prev.contains("anyOf"))
                prev = json{{"anyOf", json::array({prev})}};
            prev["anyOf"].push_back(sec);
        } else {
            props[s.section] = sec;
        }
    }
    return {{"$schema", "https://json-schema.org/draft/2020-12/schema"},
            {"title", title},
            {"type", "object"},
            {"properties", props}};
}

} // namespace nctlm
