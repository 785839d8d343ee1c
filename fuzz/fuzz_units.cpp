// Quantity parsers and count/real parsing: every input either parses to a value that formats
// and parses back, or throws UnitError.
#include "fuzz/fuzz_target.h"
#include "models/common/config.h"
#include "models/common/units.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>

using namespace nctlm;

NCTLM_FUZZ_TARGET(units) {
    if (size == 0)
        return 0;
    // The first byte picks the parser: one parse (and at most one exception) per execution.
    int which = data[0] % 6;
    std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
    if (text.find('\0') != std::string::npos)
        return 0;  // YAML scalars and argv strings cannot hold NUL
    try {
        switch (which) {
        case 0: {
            uint64_t b = parse_bytes(text);
            if (parse_bytes(format_bytes(b)) != b)
                std::abort();
            break;
        }
        case 1: {
            Frequency f = parse_frequency(text);
            if (!(f.hz > 0) || !std::isfinite(f.hz))
                std::abort();
            format_frequency(f);
            break;
        }
        case 2: {
            Bandwidth bw = parse_bandwidth(text);
            if (!(bw.bytes_per_s > 0) || !std::isfinite(bw.bytes_per_s))
                std::abort();
            format_bandwidth(bw);
            break;
        }
        case 3: {
            Duration d = parse_duration(text);
            if (!(d.ns >= 0) || !std::isfinite(d.ns))
                std::abort();
            format_duration(d);
            (void)on_fs_grid(d.ns);
            break;
        }
        case 4:
            detail::parse_count(text);
            break;
        default:
            if (!std::isfinite(detail::parse_real(text)))
                std::abort();
        }
    } catch (const UnitError&) {
    }
    return 0;
}
