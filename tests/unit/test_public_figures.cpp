// Every platform parameter that declares itself documented carries a public figure, with document
// and section, for each shipped platform (configs/public-figures.yaml), and agrees with it unless
// the entry states why not; figures of several parameters (peak TFLOPS, chip HBM rate) likewise.
// Issue 22: "no parameter contradicts a public spec without a stated reason".
#include "models/common/config.h"
#include "models/dma/dma_cost.h"
#include "platforms/platform_config.h"
#include "tests/support.h"

#include <cmath>
#include <functional>
#include <gtest/gtest.h>
#include <map>
#include <yaml-cpp/yaml.h>

using namespace nctlm;

namespace {

const char* kShipped[] = {"trn1", "trn2", "trn1-16", "trn2-16"};  // tiny is a toy with round numbers, not a claim

YAML::Node figures() { return YAML::LoadFile(test::source_path("configs/public-figures.yaml")); }

// A platform's parameter figures: its own entries over those of the platform it `extends`.
YAML::Node platform_entries(const YAML::Node& all, const std::string& name) {
    YAML::Node own = all["platforms"][name];
    YAML::Node merged(YAML::NodeType::Map);
    if (own && own["extends"])
        for (auto it : platform_entries(all, own["extends"].as<std::string>()))
            merged[it.first.as<std::string>()] = it.second;
    if (own)
        for (auto it : own)
            if (it.first.as<std::string>() != "extends")
                merged[it.first.as<std::string>()] = it.second;
    return merged;
}

struct Loaded {
    ConfigTree tree;
    PlatformConfig config;
};
Loaded load(const std::string& name) {
    Loaded l{ConfigTree::from_file(test::platform(name)), {}};
    l.config = PlatformConfig::load(l.tree);
    return l;
}

// "1%" -> 0.01; absent -> exact up to rounding of the echo.
double tolerance(const YAML::Node& entry) {
    if (!entry["tolerance"])
        return 1e-9;
    std::string t = entry["tolerance"].as<std::string>();
    EXPECT_EQ(t.back(), '%') << t;
    return std::stod(t.substr(0, t.size() - 1)) / 100.0;
}

bool near(double model, double figure, double tol) {
    return std::fabs(model - figure) <= tol * std::fabs(figure) + 1e-12;
}

// A figure's text in the base unit of its kind.
double parse_as(const std::string& kind, const std::string& text) {
    if (kind == "B/s")
        return parse_bandwidth(text).bytes_per_s;
    if (kind == "bytes")
        return double(parse_bytes(text));
    if (kind == "Hz")
        return parse_frequency(text).hz;
    if (kind == "ns")
        return parse_duration(text).ns;
    return std::stod(text);
}

// The quantities `derived:` may name, each computed from one platform's parameters.
struct Derived {
    std::string kind;
    std::function<double(const PlatformConfig&)> of;
};
const std::map<std::string, Derived>& derived_quantities() {
    auto tflops = [](const PlatformConfig& c, double rate) {
        return 2.0 * c.pe.tensor_rows * c.pe.tensor_cols * c.pe.tensor_clock.hz * rate / 1e12;
    };
    static const std::map<std::string, Derived> d = {
        {"bf16_tflops_per_core", {"number", [=](const PlatformConfig& c) { return tflops(c, 1); }}},
        {"fp8_tflops_per_core", {"number", [=](const PlatformConfig& c) { return tflops(c, c.pe.fp8_speedup); }}},
        {"fp32_tflops_per_core",
         {"number", [=](const PlatformConfig& c) { return tflops(c, 1.0 / c.pe.fp32_passes); }}},
        {"chip_bf16_tflops", {"number", [=](const PlatformConfig& c) { return c.platform.tiles * tflops(c, 1); }}},
        {"chip_fp8_tflops",
         {"number", [=](const PlatformConfig& c) { return c.platform.tiles * tflops(c, c.pe.fp8_speedup); }}},
        {"chip_fp32_tflops",
         {"number", [=](const PlatformConfig& c) { return c.platform.tiles * tflops(c, 1.0 / c.pe.fp32_passes); }}},
        {"chip_hbm_bandwidth",
         {"B/s",
          [](const PlatformConfig& c) { return c.hbm.pc_bandwidth.bytes_per_s * c.hbm.pseudo_channels * c.hbm.stacks; }}},
        {"chip_hbm_capacity",
         {"bytes", [](const PlatformConfig& c) { return double(c.hbm.stack_capacity) * c.hbm.stacks; }}},
        {"chip_dma_engines", {"number", [](const PlatformConfig& c) { return double(c.dma.engines) * c.platform.tiles; }}},
        {"chip_dma_bandwidth",
         {"B/s",
          [](const PlatformConfig& c) { return c.dma.engine_bandwidth.bytes_per_s * c.dma.engines * c.platform.tiles; }}},
        // The DMA engines on the guide's reference pattern (dma_cost.h): 128 partitions of 4 KiB rows.
        {"dma_engine_rate_4kib_per_partition",
         {"number", [](const PlatformConfig& c) { return DmaCostRules::from(c.dma).engine_rate(4096); }}},
        {"dma_core_rate_4kib_per_partition",
         {"B/s", [](const PlatformConfig& c) { return c.dma.engines * DmaCostRules::from(c.dma).engine_rate(4096) * 1e9; }}},
        // NKI DMA overview, Example 1: A[4,4096] bf16, one contiguous 32 KiB run over 4 partitions.
        {"dma_single_engine_a4x4096_bf16",
         {"ns",
          [](const PlatformConfig& c) {
              return DmaCostRules::from(c.dma).busiest_engine_ns({32768, 32768, 4, 0, false});
          }}},
        {"sbuf_bytes_per_core",
         {"bytes", [](const PlatformConfig& c) { return double(c.pe.sbuf_partitions) * c.pe.sbuf_partition_bytes; }}},
        {"chip_sbuf_bytes",
         {"bytes",
          [](const PlatformConfig& c) {
              return double(c.pe.sbuf_partitions) * c.pe.sbuf_partition_bytes * c.platform.tiles;
          }}},
        {"psum_bytes_per_core",
         {"bytes", [](const PlatformConfig& c) { return double(c.pe.sbuf_partitions) * c.pe.psum_partition_bytes; }}},
        // Elements per cycle: one per lane (partition), times the performance-mode speedup.
        {"vector_bf16_elements_per_cycle",
         {"number",
          [](const PlatformConfig& c) {
              return c.pe.sbuf_partitions * vector_speedup(c.pe.vector_timing(), 1, {Dtype::Bf16, false});
          }}},
        // NeuronLink: per chip, every link both ways (the split over directions is the assumption).
        {"neuronlink_bandwidth_per_chip",
         {"B/s",
          [](const PlatformConfig& c) {
              return c.link.wire_bandwidth.bytes_per_s * (c.link.topology == ChipTopologyKind::Torus ? 4 : 2) * 2;
          }}},
        {"neuronlink_links_per_chip",
         {"number", [](const PlatformConfig& c) { return c.link.topology == ChipTopologyKind::Torus ? 4.0 : 2.0; }}},
        {"chips", {"number", [](const PlatformConfig& c) { return double(c.platform.chips); }}},
        {"vector_fp32_elements_per_cycle",
         {"number",
          [](const PlatformConfig& c) {
              return c.pe.sbuf_partitions * vector_speedup(c.pe.vector_timing(), 1, {Dtype::Fp32, false});
          }}},
    };
    return d;
}

void expect_cited(const YAML::Node& entry, const YAML::Node& documents, const std::string& what) {
    ASSERT_TRUE(entry["doc"]) << what << ": no document";
    EXPECT_TRUE(documents[entry["doc"].as<std::string>()]) << what << ": unknown document " << entry["doc"];
    ASSERT_TRUE(entry["section"]) << what << ": no section";
    EXPECT_FALSE(entry["section"].as<std::string>().empty()) << what;
}

} // namespace

// The walk over every parameter: a documented field names its public figure on every shipped
// platform (or why there is none there), and the platform's value equals it.
TEST(PublicFigures, EveryDocumentedParameterCarriesItsFigureOnEveryPlatform) {
    YAML::Node all = figures();
    size_t checked = 0;
    for (auto name : kShipped) {
        Loaded l = load(name);
        YAML::Node entries = platform_entries(all, name);
        ASSERT_TRUE(entries.IsMap() && entries.size() > 0) << name;
        for (auto& f : PlatformConfig::field_infos()) {
            YAML::Node e = entries[f.name()];
            if (f.provenance != Provenance::documented && f.provenance != Provenance::measured) {
                EXPECT_FALSE(e && e["value"] && !e["differs"])
                    << name << " " << f.name() << " has a public figure but is declared "
                    << provenance_name(f.provenance) << ": declare it documented or say why it differs";
                continue;
            }
            ASSERT_TRUE(e) << name << " " << f.name() << " is documented but configs/public-figures.yaml has no entry";
            if (e["not_public"]) {
                EXPECT_GT(e["not_public"].as<std::string>().size(), 10u) << name << " " << f.name();
                continue;
            }
            expect_cited(e, all["documents"], std::string(name) + " " + f.name());
            double model = numeric_value(f, l.tree.effective()[f.section][f.key]);
            double figure = numeric_value(f, e["value"].as<std::string>());
            if (e["differs"])
                EXPECT_FALSE(near(model, figure, tolerance(e))) << name << " " << f.name() << ": 'differs' but agrees";
            else
                EXPECT_TRUE(near(model, figure, tolerance(e)))
                    << name << " " << f.name() << " = " << model << " contradicts the public " << figure;
            ++checked;
        }
    }
    EXPECT_GT(checked, 80u);
}

TEST(PublicFigures, EntriesNameRealParameters) {
    YAML::Node all = figures();
    std::map<std::string, bool> known;
    for (auto& f : PlatformConfig::field_infos())
        known[f.name()] = true;
    for (auto name : kShipped)
        for (auto it : platform_entries(all, name)) {
            std::string key = it.first.as<std::string>();
            EXPECT_TRUE(known.count(key)) << name << ": " << key << " is not a platform parameter";
            EXPECT_TRUE(it.second["value"] || it.second["not_public"]) << name << " " << key;
        }
}

TEST(PublicFigures, DerivedFiguresAgreeOrSayWhyNot) {
    YAML::Node all = figures();
    for (auto name : kShipped) {
        Loaded l = load(name);
        for (const YAML::Node& e : all["derived"][name]) {
            std::string what = e["what"].as<std::string>();
            auto it = derived_quantities().find(what);
            ASSERT_NE(it, derived_quantities().end()) << what << ": no such derived quantity";
            expect_cited(e, all["documents"], std::string(name) + " " + what);
            double model = it->second.of(l.config);
            double figure = parse_as(it->second.kind, e["value"].as<std::string>());
            bool agrees = near(model, figure, tolerance(e));
            if (e["differs"])
                EXPECT_FALSE(agrees) << name << " " << what << ": 'differs' but agrees (" << model << ")";
            else
                EXPECT_TRUE(agrees) << name << " " << what << ": model " << model << ", public " << figure;
        }
    }
}

TEST(PublicFigures, FactsAreCited) {
    YAML::Node all = figures();
    for (auto name : kShipped) {
        ASSERT_TRUE(all["facts"][name].IsSequence()) << name;
        for (const YAML::Node& e : all["facts"][name]) {
            ASSERT_TRUE(e["what"] && e["value"]);
            expect_cited(e, all["documents"], std::string(name) + " " + e["what"].as<std::string>());
        }
    }
}

// The check can fail: a clock moved off its public figure is caught.
TEST(PublicFigures, AContradictingValueIsCaught) {
    YAML::Node all = figures();
    ConfigTree t = ConfigTree::from_file(test::platform("trn1"));
    t.set("pe.scalar_clock=1.12 GHz");
    PlatformConfig::load(t);
    FieldInfo f;
    for (auto& g : PlatformConfig::field_infos())
        if (g.name() == "pe.scalar_clock")
            f = g;
    double model = numeric_value(f, t.effective()["pe"]["scalar_clock"]);
    double figure = numeric_value(f, all["platforms"]["trn1"]["pe.scalar_clock"]["value"].as<std::string>());
    EXPECT_FALSE(near(model, figure, 1e-9));
}
