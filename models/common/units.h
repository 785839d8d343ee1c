// Quantities with units, as written in YAML ("32 KiB", "1.4 GHz", "410 GB/s", "60 ns").
// Pure C++: no SystemC here, so analytic models and unit tests use the same types.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace nctlm {

// Thrown by the parsers; the config loader adds file:line:col and the key.
struct UnitError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// A span of simulated time. Stored in nanoseconds as double: every model figure is a few
// decimal digits of ns, far inside double precision.
struct Duration {
    double ns = 0.0;
    constexpr Duration() = default;
    constexpr explicit Duration(double nanoseconds) : ns(nanoseconds) {}
    static constexpr Duration zero() { return Duration(0.0); }
    constexpr Duration operator+(Duration o) const { return Duration(ns + o.ns); }
    constexpr Duration operator-(Duration o) const { return Duration(ns - o.ns); }
    constexpr Duration operator*(double k) const { return Duration(ns * k); }
    Duration& operator+=(Duration o) { ns += o.ns; return *this; }
    constexpr bool operator<(Duration o) const { return ns < o.ns; }
    constexpr bool operator==(Duration o) const { return ns == o.ns; }
};

// A clock: turns cycle counts into time.
struct Frequency {
    double hz = 0.0;
    Duration period() const { return Duration(1e9 / hz); }
    Duration cycles(double n) const { return Duration(n * 1e9 / hz); }
};

// A data rate: turns byte counts into time.
struct Bandwidth {
    double bytes_per_s = 0.0;
    Duration transfer(double bytes) const { return Duration(bytes * 1e9 / bytes_per_s); }
    double gb_per_s() const { return bytes_per_s / 1e9; }
};

// t_ns on the kernel's 1 fs grid: differences of absolute times in double carry float noise
// (150.00000000000003, a wait of -1.1e-13 ns); every simulated time is a whole number of fs.
inline double on_fs_grid(double t_ns) {
    double fs = t_ns * 1e6;
    if (!(fs > -9e15 && fs < 9e15))  // beyond 2^53 fs the double is already integral in fs
        return t_ns;
    return static_cast<double>(static_cast<long long>(fs < 0 ? fs - 0.5 : fs + 0.5)) / 1e6 + 0.0;
}

// Parsers: a number, optional space, a unit. Decimal prefixes are SI powers of 1000 (kB, MB, GB,
// kHz), binary prefixes (KiB, MiB, GiB) powers of 1024; "KB" is refused as ambiguous. Bandwidths
// take bytes (GB/s) or bits (Gb/s = GB/s / 8). A missing or unknown unit is an error.
uint64_t parse_bytes(const std::string& text);
Frequency parse_frequency(const std::string& text);
Bandwidth parse_bandwidth(const std::string& text);
Duration parse_duration(const std::string& text);

// Canonical text for the effective-config echo; parse(format(x)) == x.
std::string format_bytes(uint64_t bytes);
std::string format_frequency(Frequency f);
std::string format_bandwidth(Bandwidth b);
std::string format_duration(Duration d);

} // namespace nctlm
