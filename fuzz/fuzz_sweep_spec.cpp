// Sweep specs: parse a spec (and, separately, the input as one range), expand its points.
// Only ConfigError / UnitError may come out.
#include "fuzz/fuzz_target.h"
#include "study/sweep_spec.h"
#include "models/common/config.h"

#include <cstdint>
#include <sstream>
#include <string>

using namespace nctlm;
using namespace nctlm::sweep;

NCTLM_FUZZ_TARGET(sweep_spec) {
    std::string text(reinterpret_cast<const char*>(data), size);
    try {
        std::istringstream in(text);
        YAML::Node doc = load_yaml_stream(in, "spec.yaml");
        Spec s = Spec::parse(doc, "/fuzz/spec.yaml", "/fuzz");
        size_t total = 1;  // parse bounds it at 10^6; keep each execution fast
        for (auto& g : s.groups)
            total *= g.size();
        if (total <= 10000)
            s.points();
        s.axis_names();
        s.at("testbench");  // the marks of what the spec names (issue 23)
        for (auto& p : s.plots)
            if (!p.file.empty() && !inside_output(p.file))
                std::abort();  // parse must have refused a plot file outside -o
    } catch (const ConfigError&) {
    } catch (const UnitError&) {
    }
    if (text.find('\0') == std::string::npos && text.size() < 256) {
        try {
            if (is_range(text))
                expand_range(text);
            parse_timeout_seconds(text);
        } catch (const ConfigError&) {
        } catch (const UnitError&) {
        }
    }
    return 0;
}
