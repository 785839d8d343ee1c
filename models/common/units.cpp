#include "models/common/units.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fmt/format.h>
#include <utility>
#include <vector>

namespace nctlm {
namespace {

struct Split {
    double number;
    std::string unit;
};

bool errno_overflowed(double value) { return errno == ERANGE && std::fabs(value) > 1; }

Split split_number(const std::string& text, const char* what) {
    const char* begin = text.c_str();
    char* end = nullptr;
    errno = 0;
    double value = std::strtod(begin, &end);
    if (end == begin)
        throw UnitError(fmt::format("'{}' is not a {} (expected a number and a unit)", text, what));
    // strtod answers ±HUGE_VAL for "1e400": an overflow, not a big number.
    if (!std::isfinite(value) || errno_overflowed(value))
        throw UnitError(fmt::format("'{}' is not a finite number (too large)", text));
    std::string unit(end);
    while (!unit.empty() && std::isspace(static_cast<unsigned char>(unit.front())))
        unit.erase(unit.begin());
    while (!unit.empty() && std::isspace(static_cast<unsigned char>(unit.back())))
        unit.pop_back();
    return {value, unit};
}

using Scale = std::vector<std::pair<const char*, double>>;

double scaled(const std::string& text, const char* what, const Scale& scale) {
    Split s = split_number(text, what);
    if (s.unit.empty())
        throw UnitError(fmt::format("'{}' has no unit; a {} needs one of {}", text, what, [&] {
            std::string all;
            for (auto& [u, _] : scale)
                all += (all.empty() ? "" : ", ") + std::string(u);
            return all;
        }()));
    for (auto& [unit, factor] : scale)
        if (s.unit == unit) {
            if (s.number < 0)
                throw UnitError(fmt::format("'{}': a {} cannot be negative", text, what));
            double v = s.number * factor;
            if (!std::isfinite(v))
                throw UnitError(fmt::format("'{}' is too large for a {}", text, what));
            return v;
        }
    std::string all;
    for (auto& [u, _] : scale)
        all += (all.empty() ? "" : ", ") + std::string(u);
    bool size = std::string(what) == "size";
    if ((size && s.unit == "KB") || (!size && s.unit == "KB/s"))  // JEDEC's 1024 or a mistyped SI kB?
        throw UnitError(fmt::format("'{}': '{}' is ambiguous; write {} for 1024 B or {} for 1000 B", text, s.unit,
                                    s.unit == "KB" ? "KiB" : "KiB/s", s.unit == "KB" ? "kB" : "kB/s"));
    throw UnitError(fmt::format("'{}': unknown unit '{}' for a {} (use {})", text, s.unit, what, all));
}

// Decimal prefixes are SI (kB = 1000 B, MB = 10^6 B); binary ones IEC (KiB = 1024 B). "KB" is
// neither (JEDEC uses it for 1024, SI has no capital K) and is refused with a hint, as "KB/s" is.
const Scale kBytes = {{"B", 1},         {"KiB", 1024.0},    {"MiB", 1024.0 * 1024},
                      {"GiB", 1024.0 * 1024 * 1024},        {"TiB", 1024.0 * 1024 * 1024 * 1024},
                      {"kB", 1e3},      {"MB", 1e6},        {"GB", 1e9},
                      {"TB", 1e12}};
const Scale kFrequency = {{"Hz", 1}, {"kHz", 1e3}, {"MHz", 1e6}, {"GHz", 1e9}};
// Bits per second (b/s, Gb/s: a pin or link rate, as datasheets give it) are bytes per second / 8.
const Scale kBandwidth = {{"B/s", 1},        {"kB/s", 1e3},      {"MB/s", 1e6},
                          {"GB/s", 1e9},     {"TB/s", 1e12},     {"KiB/s", 1024.0},
                          {"MiB/s", 1048576.0}, {"GiB/s", 1073741824.0},
                          {"B/ns", 1e9},     {"b/s", 1 / 8.0},   {"kb/s", 1e3 / 8},
                          {"Mb/s", 1e6 / 8}, {"Gb/s", 1e9 / 8},  {"Tb/s", 1e12 / 8}};
const Scale kDuration = {{"fs", 1e-6}, {"ps", 1e-3}, {"ns", 1}, {"us", 1e3}, {"µs", 1e3}, {"ms", 1e6}, {"s", 1e9}};

// Prints x with up to `digits` significant decimals and no trailing zeros.
std::string trim_number(double x) {
    std::string s = fmt::format("{:.6f}", x);
    while (!s.empty() && s.back() == '0')
        s.pop_back();
    if (!s.empty() && s.back() == '.')
        s.pop_back();
    return s;
}

} // namespace

uint64_t parse_bytes(const std::string& text) {
    double v = scaled(text, "size", kBytes);
    if (v != std::floor(v))
        throw UnitError(fmt::format("'{}' is not a whole number of bytes", text));
    // 2^64 is exact in a double; casting anything at or above it to uint64_t is undefined.
    if (v >= 18446744073709551616.0)
        throw UnitError(fmt::format("'{}' is too large: a size must be below 2^64 B (16 EiB)", text));
    return static_cast<uint64_t>(v);
}

Frequency parse_frequency(const std::string& text) {
    double hz = scaled(text, "frequency", kFrequency);
    if (hz <= 0)
        throw UnitError(fmt::format("'{}': a frequency must be positive", text));
    return Frequency{hz};
}

Bandwidth parse_bandwidth(const std::string& text) {
    double bps = scaled(text, "bandwidth", kBandwidth);
    if (bps <= 0)
        throw UnitError(fmt::format("'{}': a bandwidth must be positive", text));
    return Bandwidth{bps};
}

Duration parse_duration(const std::string& text) { return Duration(scaled(text, "duration", kDuration)); }

std::string format_bytes(uint64_t bytes) {
    static const std::pair<const char*, uint64_t> units[] = {
        {"TiB", 1ull << 40}, {"GiB", 1ull << 30}, {"MiB", 1ull << 20}, {"KiB", 1ull << 10}};
    for (auto& [u, f] : units)
        if (bytes != 0 && bytes % f == 0)
            return fmt::format("{} {}", bytes / f, u);
    return fmt::format("{} B", bytes);
}

std::string format_frequency(Frequency f) {
    if (f.hz >= 1e9)
        return trim_number(f.hz / 1e9) + " GHz";
    if (f.hz >= 1e6)
        return trim_number(f.hz / 1e6) + " MHz";
    return trim_number(f.hz) + " Hz";
}

std::string format_bandwidth(Bandwidth b) { return trim_number(b.bytes_per_s / 1e9) + " GB/s"; }

std::string format_duration(Duration d) {
    if (d.ns != 0 && std::fabs(d.ns) >= 1e6)
        return trim_number(d.ns / 1e6) + " ms";
    if (d.ns != 0 && std::fabs(d.ns) >= 1e4)
        return trim_number(d.ns / 1e3) + " us";
    return trim_number(d.ns) + " ns";
}

} // namespace nctlm
