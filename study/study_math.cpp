#include "study/study_math.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace nctlm::study {

std::string figure_unit(const std::string& f) {
    auto ends = [&](const char* suffix) {
        std::string x(suffix);
        return f.size() > x.size() && f.compare(f.size() - x.size(), x.size(), x) == 0;
    };
    // Longest first: gb_per_s also ends in _s.
    for (auto [suffix, unit] : {std::pair{"gb_per_s", "GB/s"}, {"_gbps", "GB/s"}, {"_gbs", "GB/s"}, {"_bytes", "B"},
                                {"_tflops", "TFLOP/s"}, {"_ns", "ns"}, {"_us", "us"}, {"_ms", "ms"}, {"_s", "s"}})
        if (ends(suffix) || f == suffix || f == std::string(suffix).substr(1))
            return unit;
    for (const char* ratio : {"ratio", "efficiency", "fraction", "rate", "share"})
        if (f.find(ratio) != std::string::npos)
            return "1";
    if (f == "bytes")
        return "B";
    if (f == "tflops")
        return "TFLOP/s";
    return "";
}

double swing(double f0, std::optional<double> f_down, std::optional<double> f_up) {
    if ((!f_down && !f_up) || f0 == 0)
        return 0;
    double lo = f0, hi = f0;
    for (auto f : {f_down, f_up})
        if (f) {
            lo = std::min(lo, *f);
            hi = std::max(hi, *f);
        }
    return (hi - lo) / std::fabs(f0);
}

bool lopsided(double p0, double f0, std::optional<double> p_down, std::optional<double> f_down,
              std::optional<double> p_up, std::optional<double> f_up, double floor) {
    if (!p_down || !f_down || !p_up || !f_up || !(p0 > 0) || !(f0 > 0) || !(*p_down > 0) || !(*p_up > 0) ||
        !(*f_down > 0) || !(*f_up > 0) || *p_down == p0 || *p_up == p0)
        return false;
    if (std::max(std::fabs(*f_down / f0 - 1), std::fabs(*f_up / f0 - 1)) < floor)
        return false;
    double down = std::log(*f_down / f0) / std::log(*p_down / p0), up = std::log(*f_up / f0) / std::log(*p_up / p0);
    if ((down > 0 && up < 0) || (down < 0 && up > 0))
        return true;
    double big = std::max(std::fabs(down), std::fabs(up)), small = std::min(std::fabs(down), std::fabs(up));
    return small < big / 3;
}

std::optional<double> elasticity(double p0, double f0, std::optional<double> p_down, std::optional<double> f_down,
                                 std::optional<double> p_up, std::optional<double> f_up) {
    auto ok = [](std::optional<double> v) { return v && *v > 0 && std::isfinite(*v); };
    if (!(p0 > 0) || !(f0 > 0))
        return std::nullopt;
    bool down = ok(p_down) && ok(f_down) && *p_down != p0, up = ok(p_up) && ok(f_up) && *p_up != p0;
    double pa = p0, fa = f0, pb = p0, fb = f0;
    if (down) {
        pa = *p_down;
        fa = *f_down;
    }
    if (up) {
        pb = *p_up;
        fb = *f_up;
    }
    if (!down && !up)
        return std::nullopt;
    return (std::log(fb) - std::log(fa)) / (std::log(pb) - std::log(pa));
}

uint64_t Rng::next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

double Rng::uniform() { return double(next() >> 11) * 0x1.0p-53; }

std::vector<std::vector<double>> latin_hypercube(size_t n, size_t dims, uint64_t seed) {
    Rng rng(seed);
    std::vector<std::vector<double>> out(n, std::vector<double>(dims));
    std::vector<size_t> strata(n);
    for (size_t d = 0; d < dims; ++d) {
        std::iota(strata.begin(), strata.end(), 0);
        for (size_t i = n; i > 1; --i)  // Fisher-Yates with our own generator
            std::swap(strata[i - 1], strata[rng.next() % i]);
        for (size_t s = 0; s < n; ++s)
            out[s][d] = (double(strata[s]) + rng.uniform()) / double(n);
    }
    return out;
}

double scale_to(double u, double lo, double hi) {
    if (lo > 0 && hi > 0)
        return lo * std::pow(hi / lo, u);
    return lo + (hi - lo) * u;
}

double quantile(std::vector<double> v, double q) {
    if (v.empty())
        return NAN;
    std::sort(v.begin(), v.end());
    double at = q * double(v.size() - 1);
    size_t i = size_t(std::floor(at));
    if (i + 1 >= v.size())
        return v.back();
    return v[i] + (v[i + 1] - v[i]) * (at - double(i));
}

namespace {
std::vector<double> ranks(const std::vector<double>& x) {
    std::vector<size_t> order(x.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return x[a] < x[b]; });
    std::vector<double> r(x.size());
    for (size_t i = 0; i < order.size();) {
        size_t j = i;
        while (j + 1 < order.size() && x[order[j + 1]] == x[order[i]])
            ++j;
        for (size_t k = i; k <= j; ++k)
            r[order[k]] = (double(i) + double(j)) / 2;
        i = j + 1;
    }
    return r;
}
} // namespace

double spearman(const std::vector<double>& x, const std::vector<double>& y) {
    if (x.size() != y.size() || x.size() < 2)
        return 0;
    auto rx = ranks(x), ry = ranks(y);
    double mx = std::accumulate(rx.begin(), rx.end(), 0.0) / rx.size();
    double my = std::accumulate(ry.begin(), ry.end(), 0.0) / ry.size();
    double sxy = 0, sxx = 0, syy = 0;
    for (size_t i = 0; i < rx.size(); ++i) {
        sxy += (rx[i] - mx) * (ry[i] - my);
        sxx += (rx[i] - mx) * (rx[i] - mx);
        syy += (ry[i] - my) * (ry[i] - my);
    }
    if (sxx == 0 || syy == 0)
        return 0;
    return sxy / std::sqrt(sxx * syy);
}

} // namespace nctlm::study
