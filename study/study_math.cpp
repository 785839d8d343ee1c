#include "study/study_math.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace nctlm::study {

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
