// The bounded histogram (models/common/stats.h): count, min, max and mean exact; nearest-rank
// percentiles within 1 % relative of the exact ones over wide, skewed and negative samples; memory
// bounded whatever the number of samples.
#include "models/common/stats.h"

#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>
#include <random>

using nctlm::Histogram;

namespace {

double exact_percentile(std::vector<double> s, double p) {
    std::sort(s.begin(), s.end());
    size_t rank = size_t(std::ceil(p * double(s.size())));
    return s[rank == 0 ? 0 : std::min(rank, s.size()) - 1];
}

void expect_within_1pct(const std::vector<double>& samples, double resolution) {
    Histogram h;
    h.resolution = resolution;
    double sum = 0;
    for (double v : samples) {
        h.add(v);
        sum += v;
    }
    ASSERT_EQ(h.count(), samples.size());
    EXPECT_EQ(h.min(), *std::min_element(samples.begin(), samples.end()));
    EXPECT_EQ(h.max(), *std::max_element(samples.begin(), samples.end()));
    EXPECT_NEAR(h.mean(), sum / double(samples.size()), 1e-9 * std::abs(sum / double(samples.size())));
    for (double p : {0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 1.0}) {
        double want = exact_percentile(samples, p), got = h.percentile(p);
        // Within 1 % relative (or one grid step, for values near zero).
        EXPECT_LE(std::abs(got - want), std::max(0.01 * std::abs(want), resolution)) << "p" << p << ": " << got
                                                                                       << " vs " << want;
    }
}

} // namespace

TEST(Histogram, PercentilesWithinOnePercentOnLogNormalLatencies) {
    std::mt19937_64 rng(1);
    std::lognormal_distribution<double> d(std::log(500.0), 1.5);  // ns: 10s of ns .. 100s of us
    std::vector<double> s(200000);
    for (double& v : s)
        v = d(rng);
    expect_within_1pct(s, 1e-6);
}

TEST(Histogram, PercentilesWithinOnePercentOverManyDecadesAndSigns) {
    std::mt19937_64 rng(2);
    std::uniform_real_distribution<double> exponent(-3, 9), sign(0, 1);
    std::vector<double> s(100000);
    for (double& v : s)
        v = std::pow(10.0, exponent(rng)) * (sign(rng) < 0.2 ? -1 : 1);
    s[17] = 0;
    s[18] = 0;
    expect_within_1pct(s, 1e-6);
}

TEST(Histogram, SmallIntegersAreExact) {
    Histogram h;
    h.resolution = 1;
    std::vector<double> s;
    for (int i = 0; i < 1000; ++i)
        s.push_back(double(i % 97));
    for (double v : s)
        h.add(v);
    for (double p : {0.1, 0.5, 0.9, 0.99})
        EXPECT_EQ(h.percentile(p), exact_percentile(s, p)) << p;
}

TEST(Histogram, RelativeBucketWidthBoundsTheError) {
    // Every bucket above the exact range spans at most 1/64 of its low end, so its middle is
    // within 1/128 of any value in it.
    for (uint64_t steps : {127ull, 128ull, 129ull, 1000ull, 123456789ull, (1ull << 40) + 12345, (1ull << 62) + 7}) {
        uint32_t b = Histogram::bucket_of(steps);
        uint64_t lo = Histogram::bucket_low(b), w = Histogram::bucket_width(b);
        EXPECT_LE(lo, steps);
        EXPECT_LT(steps, lo + w);
        if (w > 1) {
            EXPECT_LE(double(w), double(lo) / 64.0) << steps;
        }
    }
}

TEST(Histogram, MemoryDoesNotGrowWithSamples) {
    Histogram h;
    std::mt19937_64 rng(3);
    std::uniform_real_distribution<double> d(100, 10000);
    for (int i = 0; i < 100000; ++i)
        h.add(d(rng));
    size_t after_100k = h.summary().dump().size();
    for (int i = 0; i < 2000000; ++i)
        h.add(d(rng));
    EXPECT_EQ(h.count(), 2100000u);
    // The summary has the same shape; the buckets cover 100..10000 ns at most: 7 octaves x 64.
    EXPECT_EQ(h.summary().size(), 8u);
    EXPECT_GT(after_100k, 0u);
    EXPECT_LE(h.bucket_count(), 8u * 64u);
}

TEST(Histogram, MergeEqualsAddingEverySample) {
    Histogram a, b, all;
    std::mt19937_64 rng(4);
    std::exponential_distribution<double> d(0.01);
    for (int i = 0; i < 50000; ++i) {
        double v = d(rng);
        (i % 3 ? a : b).add(v);
        all.add(v);
    }
    a.merge(b);
    EXPECT_EQ(a.count(), all.count());
    EXPECT_EQ(a.min(), all.min());
    EXPECT_EQ(a.max(), all.max());
    for (double p : {0.5, 0.9, 0.99})
        EXPECT_EQ(a.percentile(p), all.percentile(p));
}
