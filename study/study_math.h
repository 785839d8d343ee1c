// The arithmetic of `nctlm sensitivity` and `nctlm uncertainty`, apart from processes and files:
// perturbed values, elasticities, Latin hypercube samples, quantiles and rank correlations.
// Pure C++, unit-tested without a kernel (tests/sweep/test_study_math.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nctlm::study {

// d ln figure / d ln parameter from the base point and the points below and above it (either may
// be missing: a one-sided difference then). Central differences in log space when both exist.
// nullopt if a figure or a parameter value is not positive, or the parameter did not move.
std::optional<double> elasticity(double p0, double f0, std::optional<double> p_down, std::optional<double> f_down,
                                 std::optional<double> p_up, std::optional<double> f_up);

// The width of a tornado bar: the figure's spread over {down, base, up} relative to the base,
// max - min over f0 (a fraction); 0 if no side ran.
double swing(double f0, std::optional<double> f_down, std::optional<double> f_up);

// A parameter whose response is far from linear over its two sides: the one-sided elasticities
// (d ln figure / d ln parameter below and above the base) differ in sign, or the smaller is under a
// third of the larger, while the figure moved by at least `floor` (a fraction) on some side. One
// elasticity then misdescribes it; e.g. probe hbm.pc_bandwidth +-10 %: down -> +6.0 %, up -> -0.1 %.
bool lopsided(double p0, double f0, std::optional<double> p_down, std::optional<double> f_down,
              std::optional<double> p_up, std::optional<double> f_up, double floor = 0.005);

// The unit of a headline figure from its name's suffix, as the plots read it: latency_ns -> "ns",
// bandwidth_gbs / gb_per_s -> "GB/s", efficiency -> "1" (a ratio); "" if the name does not say.
std::string figure_unit(const std::string& figure);

// A reproducible generator (splitmix64): the same seed gives the same samples on every platform,
// unlike std::uniform_real_distribution.
class Rng {
public:
    explicit Rng(uint64_t seed) : state_(seed) {}
    uint64_t next();
    double uniform();  // [0, 1)
private:
    uint64_t state_;
};

// Latin hypercube on the unit cube: n samples x dims, each dimension cut into n strata with
// exactly one sample in each, stratum order shuffled per dimension. [sample][dim] in [0, 1).
std::vector<std::vector<double>> latin_hypercube(size_t n, size_t dims, uint64_t seed);

// Maps u in [0, 1) onto [lo, hi]: geometrically when both ends are positive (a factor-of-two
// range is as likely to be off by x0.7 as by x1.4), else linearly.
double scale_to(double u, double lo, double hi);

// The q-quantile (0..1) by linear interpolation between order statistics (numpy's default).
double quantile(std::vector<double> values, double q);

// Spearman rank correlation of x and y (ties get average ranks); 0 if either is constant.
double spearman(const std::vector<double>& x, const std::vector<double>& y);

} // namespace nctlm::study
