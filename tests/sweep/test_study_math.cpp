// The arithmetic of the sensitivity and uncertainty studies, without running anything.
#include "study/study_math.h"

#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>
#include <set>

using namespace nctlm::study;

// latency = fixed + bytes / bandwidth: d ln L / d ln bw = -(bytes / bw) / L at the base point.
// A central difference over +-10 % lands within 1 % of that.
TEST(StudyMath, ElasticityOfAFixedPlusTransferLatency) {
    const double fixed = 61, bytes = 2048, bw = 25.6;
    auto latency = [&](double b) { return fixed + bytes / b; };
    double exact = -(bytes / bw) / latency(bw);
    auto e = elasticity(bw, latency(bw), 0.9 * bw, latency(0.9 * bw), 1.1 * bw, latency(1.1 * bw));
    ASSERT_TRUE(e);
    EXPECT_NEAR(*e / exact, 1.0, 0.01) << *e << " vs " << exact;
    EXPECT_NE(*e, exact);  // a finite difference, not the formula
    // One side only: a one-sided difference, still close.
    auto up = elasticity(bw, latency(bw), std::nullopt, std::nullopt, 1.1 * bw, latency(1.1 * bw));
    ASSERT_TRUE(up);
    EXPECT_NEAR(*up / exact, 1.0, 0.06);
    // Undefined: nothing moved, or a non-positive figure.
    EXPECT_FALSE(elasticity(bw, 1, std::nullopt, std::nullopt, std::nullopt, std::nullopt));
    EXPECT_FALSE(elasticity(bw, 0, 0.9 * bw, 1, 1.1 * bw, 1));
    // A figure proportional to the parameter has elasticity 1 exactly, whatever the step.
    EXPECT_NEAR(*elasticity(10, 30, 5.0, 15.0, 20.0, 60.0), 1.0, 1e-12);
}

TEST(StudyMath, LatinHypercubeHasOneSamplePerStratumAndIsSeeded) {
    const size_t n = 16, dims = 5;
    auto a = latin_hypercube(n, dims, 42);
    ASSERT_EQ(a.size(), n);
    for (size_t d = 0; d < dims; ++d) {
        std::set<size_t> strata;
        for (auto& s : a) {
            ASSERT_GE(s[d], 0.0);
            ASSERT_LT(s[d], 1.0);
            strata.insert(size_t(s[d] * n));
        }
        EXPECT_EQ(strata.size(), n) << "dimension " << d;
    }
    EXPECT_EQ(latin_hypercube(n, dims, 42), a);
    EXPECT_NE(latin_hypercube(n, dims, 43), a);
}

TEST(StudyMath, ScaleQuantileSpearman) {
    EXPECT_DOUBLE_EQ(scale_to(0, 2, 8), 2);
    EXPECT_NEAR(scale_to(0.5, 2, 8), 4, 1e-12);  // geometric mid-point
    EXPECT_DOUBLE_EQ(scale_to(0.5, -1, 1), 0);
    EXPECT_DOUBLE_EQ(quantile({1, 2, 3, 4, 5}, 0.5), 3);
    EXPECT_DOUBLE_EQ(quantile({1, 2, 3, 4, 5}, 0.05), 1.2);
    EXPECT_DOUBLE_EQ(quantile({5, 1, 4, 2, 3}, 0.95), 4.8);
    EXPECT_NEAR(spearman({1, 2, 3, 4}, {10, 20, 25, 100}), 1, 1e-12);
    EXPECT_NEAR(spearman({1, 2, 3, 4}, {4, 3, 2, 1}), -1, 1e-12);
    EXPECT_DOUBLE_EQ(spearman({1, 1, 1}, {1, 2, 3}), 0);
}

TEST(StudyMath, SwingIsTheSpreadOverDownBaseAndUp) {
    EXPECT_DOUBLE_EQ(swing(100, 90.0, 120.0), 0.30);
    EXPECT_DOUBLE_EQ(swing(100, 110.0, 105.0), 0.10);  // both above: base to the highest
    EXPECT_DOUBLE_EQ(swing(100, std::nullopt, 80.0), 0.20);
    EXPECT_DOUBLE_EQ(swing(100, std::nullopt, std::nullopt), 0);
}

TEST(StudyMath, LopsidedComparesTheOneSidedElasticities) {
    // probe hbm.pc_bandwidth +-10 %: +6.0 % and -0.1 %.
    EXPECT_TRUE(lopsided(25.6, 140.93, 23.04, 140.93 * 1.060, 28.16, 140.93 * 0.999));
    // Both sides the same way: not monotone.
    EXPECT_TRUE(lopsided(1.6, 140.93, 1.44, 140.93 * 1.063, 1.76, 140.93 * 1.008));
    // A range of x0.5..x2.5 moving the figure -5.7 % and +17 %: one-sided elasticities 0.085 and
    // 0.17, within a factor of three: not lopsided, only an asymmetric range.
    EXPECT_FALSE(lopsided(8, 140.93, 4.0, 140.93 * 0.943, 20.0, 140.93 * 1.17));
    // Below the floor nothing is flagged; one side missing cannot be judged.
    EXPECT_FALSE(lopsided(1, 100, 0.9, 100.1, 1.1, 100.0));
    EXPECT_FALSE(lopsided(1, 100, std::nullopt, std::nullopt, 1.1, 120.0));
}

TEST(StudyMath, FigureUnitFromTheName) {
    EXPECT_EQ(figure_unit("latency_ns"), "ns");
    EXPECT_EQ(figure_unit("sim_time_ns"), "ns");
    EXPECT_EQ(figure_unit("bandwidth_gbs"), "GB/s");
    EXPECT_EQ(figure_unit("gb_per_s"), "GB/s");
    EXPECT_EQ(figure_unit("efficiency"), "1");
    EXPECT_EQ(figure_unit("ratio"), "1");
    EXPECT_EQ(figure_unit("bytes"), "B");
    EXPECT_EQ(figure_unit("requests"), "");
}
