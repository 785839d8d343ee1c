// Every platform parameter states where its value comes from (issue 14): a field added without
// .measured/.documented/.calibrated/.assumed/.setting fails here, and so does a calibrated or
// assumed number without a usable plausible range, or a range that excludes a shipped platform.
#include "models/common/config.h"
#include "platforms/platform_config.h"
#include "tests/support.h"

#include <gtest/gtest.h>

using namespace nctlm;

TEST(Provenance, EveryPlatformFieldHasOne) {
    auto all = PlatformConfig::field_infos();
    ASSERT_GT(all.size(), 40u);
    for (auto& f : all) {
        EXPECT_NE(f.provenance, Provenance::unset) << f.name() << " declares no provenance (config.h)";
        EXPECT_FALSE(f.source.empty()) << f.name() << " has no source";
        bool uncertain = f.provenance == Provenance::calibrated || f.provenance == Provenance::assumed;
        if (uncertain && f.numeric()) {
            EXPECT_FALSE(f.plausible.empty()) << f.name() << " is " << provenance_name(f.provenance)
                                              << " but gives no plausible range";
        }
        if (!uncertain) {
            EXPECT_TRUE(f.plausible.empty()) << f.name() << ": only calibrated/assumed fields carry a range";
        }
    }
}

TEST(Provenance, PlausibleRangesParseAndContainEveryShippedPlatform) {
    for (auto name : {"trn1", "trn2"}) {  // tiny is a toy with round numbers, not a claim
        ConfigTree tree = ConfigTree::from_file(test::platform(name));
        PlatformConfig::load(tree);
        for (auto& f : PlatformConfig::field_infos()) {
            if (f.plausible.empty() || !f.numeric())
                continue;
            double v = numeric_value(f, tree.effective()[f.section][f.key]);
            auto [lo, hi] = plausible_bounds(f, v);
            EXPECT_LE(lo, v) << name << " " << f.name() << " " << f.plausible;
            EXPECT_GE(hi, v) << name << " " << f.name() << " " << f.plausible;
        }
    }
}

TEST(Provenance, RangeForms) {
    FieldInfo f{"noc", "link_bandwidth", "B/s", "", "", "", Provenance::assumed, "x", "x0.5..x2"};
    auto [lo, hi] = plausible_bounds(f, 1e12);
    EXPECT_DOUBLE_EQ(lo, 0.5e12);
    EXPECT_DOUBLE_EQ(hi, 2e12);
    f.plausible = "-10%..+20%";
    std::tie(lo, hi) = plausible_bounds(f, 100);
    EXPECT_DOUBLE_EQ(lo, 90);
    EXPECT_DOUBLE_EQ(hi, 120);
    f.plausible = "100 GB/s..1 TB/s";
    std::tie(lo, hi) = plausible_bounds(f, 5e11);
    EXPECT_DOUBLE_EQ(lo, 1e11);
    EXPECT_DOUBLE_EQ(hi, 1e12);
    f.plausible = "2 GHz..3";
    EXPECT_THROW(plausible_bounds(f, 1), ConfigError);
    f.plausible = "5..1";
    EXPECT_THROW(plausible_bounds(f, 1), ConfigError);
    EXPECT_EQ(numeric_text(f, 2.56e10), "25.6 GB/s");
    EXPECT_DOUBLE_EQ(numeric_value(f, "25.6 GB/s"), 2.56e10);
}

TEST(Provenance, DescribeShowsIt) {
    std::string md = describe<NocConfig>("noc");
    EXPECT_NE(md.find("| assumed, plausible 4..20 |"), std::string::npos) << md;
}
