// `nctlm sensitivity` and `nctlm uncertainty` end to end: a closed-form elasticity of the probe,
// resume through the sweep engine, and seeded reproducibility of the intervals.
#include "tests/sweep/sweep_test_util.h"

#include "models/common/config.h"
#include "platforms/platform_config.h"

#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>
#include <sstream>

using namespace nctlm;
using namespace nctlm::test;
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {
json elasticities(const json& report, const std::string& figure) {
    json out = json::object();
    for (auto& r : report["figures"][figure]["elasticities"])
        out[r["parameter"].get<std::string>()] = r;
    return out;
}
} // namespace

// The 32 KiB probe on trn1 is fixed latency plus one 2 KiB burst per pseudo-channel at the PC rate
// (docs/calibration.md: 80 of 141 ns), so d ln latency / d ln pc_bandwidth = -(burst / pc rate) / latency.
// The hops add 4 links x hop_cycles / clock, so their elasticity is that share, positive.
// That holds while the HBM is the bottleneck: 16 PCs at 25.6 GB/s = 409.6 GB/s against the DMA
// engines' 16 x 27.2 = 435.2 GB/s, so +10 % of PC rate would cross into the DMA limit; the test
// steps 5 % and checks that precondition from the parameters.
TEST(StudyCli, ProbeElasticityToPcBandwidthIsMinusTheTransferShare) {
    std::string dir = temp_dir();
    // The pipe HBM: its transfer is exactly bytes / pc_bandwidth. (The banked PCs also obey tCCD in
    // whole DRAM clock cycles, so their rate follows hbm.dram_clock as much as hbm.pc_bandwidth.)
    auto r = run_cli("sensitivity -p " + platform("trn1") + " -t probe -o " + dir +
                     " --set hbm.model=pipe --params hbm.pc_bandwidth,noc.hop_cycles --step 5 -j 2 --no-plot");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    json report = json::parse(read_file(dir + "/sensitivity.json"));
    double latency = report["figures"]["latency_ns"]["base"];

    ConfigTree tree = ConfigTree::from_file(platform("trn1"));
    tree.set("hbm.model=pipe");
    PlatformConfig c = PlatformConfig::load(tree);
    double transfer = c.hbm.pc_bandwidth.transfer(double(c.dma.burst_size)).ns;
    double hops = 4 * c.noc.clock.cycles(c.noc.hop_cycles).ns;
    ASSERT_LT(transfer, latency);
    double burst_pcs = std::min<double>(c.hbm.pseudo_channels, 32768.0 / double(c.dma.burst_size));
    ASSERT_LT(1.05 * burst_pcs * c.hbm.pc_bandwidth.bytes_per_s, c.dma.engines * c.dma.engine_bandwidth.bytes_per_s)
        << "the +5 % point would no longer be HBM-bound: the closed form does not apply";

    json e = elasticities(report, "latency_ns");
    double pc = e["hbm.pc_bandwidth"]["elasticity"];
    EXPECT_NEAR(pc / (-transfer / latency), 1.0, 0.01) << pc << " vs " << -transfer / latency;
    double hop = e["noc.hop_cycles"]["elasticity"];
    EXPECT_NEAR(hop / (hops / latency), 1.0, 0.01) << hop << " vs " << hops / latency;
    // Ranked by |elasticity| with the provenance beside it, and on stdout as a table.
    EXPECT_EQ(report["figures"]["latency_ns"]["elasticities"][0]["parameter"], "hbm.pc_bandwidth");
    EXPECT_EQ(e["hbm.pc_bandwidth"]["provenance"], "documented");
    EXPECT_EQ(e["noc.hop_cycles"]["provenance"], "assumed");
    EXPECT_NE(r.out.find("`hbm.pc_bandwidth`"), std::string::npos) << r.out;
    EXPECT_NE(read_file(dir + "/sensitivity.csv").find("latency_ns,ns,hbm.pc_bandwidth,documented"), std::string::npos);
    fs::remove_all(dir);
}

// The points are sweep points: --resume reuses those already run (by effective-config hash)
// and runs only the new ones; the report is the same as a fresh run's.
TEST(StudyCli, SensitivityResumesThroughTheSweepEngine) {
    std::string dir = temp_dir(), fresh = temp_dir();
    std::string base = "sensitivity -p " + platform("tiny") + " -t probe --no-plot -j 2 ";
    auto first = run_cli(base + "-o " + dir + " --params hbm.controller_latency");
    ASSERT_EQ(first.exit_code, 0) << first.err;
    auto second = run_cli(base + "-o " + dir + " --params hbm.controller_latency,noc.hop_cycles --resume");
    ASSERT_EQ(second.exit_code, 0) << second.err;
    EXPECT_NE(second.err.find("(2 to run, 3 reused)"), std::string::npos) << second.err;
    auto again = run_cli(base + "-o " + fresh + " --params hbm.controller_latency,noc.hop_cycles");
    ASSERT_EQ(again.exit_code, 0) << again.err;
    json a = json::parse(read_file(dir + "/sensitivity.json")), b = json::parse(read_file(fresh + "/sensitivity.json"));
    EXPECT_EQ(a["figures"], b["figures"]);
    EXPECT_GT(a["figures"]["latency_ns"]["elasticities"].size(), 1u);
    fs::remove_all(dir);
    fs::remove_all(fresh);
}

TEST(StudyCli, SensitivityDrawsATornadoPerFigure) {
    if (system("/usr/bin/python3 -c 'import matplotlib' >/dev/null 2>&1") != 0)
        GTEST_SKIP() << "no /usr/bin/python3 with matplotlib (Debian python3-matplotlib)";
    std::string dir = temp_dir();
    auto r = run_cli("sensitivity -p " + platform("tiny") + " -t probe -o " + dir +
                     " --params hbm.pc_bandwidth,dma.clock -j 2");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::string png = read_file(dir + "/tornado-latency_ns.png");
    ASSERT_GT(png.size(), 1000u);
    EXPECT_EQ(png.substr(1, 3), "PNG");
    fs::remove_all(dir);
}

// The same seed gives the same samples and the same intervals; another seed other samples.
TEST(StudyCli, UncertaintyIsReproducibleWithAFixedSeed) {
    std::string a = temp_dir(), b = temp_dir(), c = temp_dir();
    std::string cmd = "uncertainty -p " + platform("tiny") + " -t probe -n 6 -j 2 ";
    auto ra = run_cli(cmd + "--seed 7 -o " + a), rb = run_cli(cmd + "--seed 7 -o " + b),
         rc = run_cli(cmd + "--seed 8 -o " + c);
    ASSERT_EQ(ra.exit_code, 0) << ra.err;
    ASSERT_EQ(rb.exit_code, 0) << rb.err;
    ASSERT_EQ(rc.exit_code, 0) << rc.err;
    EXPECT_EQ(read_file(a + "/uncertainty.csv"), read_file(b + "/uncertainty.csv"));
    EXPECT_NE(read_file(a + "/uncertainty.csv"), read_file(c + "/uncertainty.csv"));
    json ja = json::parse(read_file(a + "/uncertainty.json")), jb = json::parse(read_file(b + "/uncertainty.json"));
    EXPECT_EQ(ja["figures"], jb["figures"]);
    ASSERT_TRUE(ja["figures"].contains("latency_ns")) << ja.dump(1);
    auto& lat = ja["figures"]["latency_ns"];
    EXPECT_LT(lat["p5"].get<double>(), lat["p95"].get<double>());
    EXPECT_LE(lat["p5"].get<double>(), lat["median"].get<double>());
    EXPECT_LE(lat["median"].get<double>(), lat["p95"].get<double>());
    EXPECT_EQ(lat["runs"], 6);
    // Only calibrated/assumed parameters are sampled, each within its plausible range (the CSV
    // holds one row per sample, values in base units: bytes/s, Hz, ns, counts).
    std::istringstream csv(read_file(a + "/uncertainty.csv"));
    std::string header;
    std::getline(csv, header);
    std::vector<std::string> columns;
    for (std::stringstream hs(header); std::getline(hs, header, ',');)
        columns.push_back(header);
    std::vector<std::vector<double>> samples;
    for (std::string line; std::getline(csv, line);) {
        std::vector<double> row;
        std::stringstream ls(line);
        std::string cell;
        std::getline(ls, cell, ',');  // the case label
        while (std::getline(ls, cell, ','))
            row.push_back(cell.empty() ? NAN : std::stod(cell));
        samples.push_back(row);
    }
    ASSERT_EQ(samples.size(), 6u);
    auto infos = PlatformConfig::field_infos();
    size_t checked = 0;
    for (auto& p : ja["parameters"]) {
        EXPECT_TRUE(p["provenance"] == "assumed" || p["provenance"] == "calibrated") << p;
        auto f = std::find_if(infos.begin(), infos.end(), [&](const FieldInfo& i) { return i.name() == p["name"]; });
        ASSERT_NE(f, infos.end());
        double lo = numeric_value(*f, p["low"]), hi = numeric_value(*f, p["high"]);
        // Headers carry the unit of the numbers below them: "dma.clock [Hz]".
        size_t col = std::find_if(columns.begin(), columns.end(),
                                  [&](const std::string& c) { return c.rfind(f->name() + " [", 0) == 0; }) -
                     columns.begin() - 1;
        ASSERT_LT(col, samples[0].size()) << f->name();
        for (auto& row : samples) {
            EXPECT_GE(row[col], lo * (1 - 1e-9) - 0.5) << f->name();  // counts round to the nearest
            EXPECT_LE(row[col], hi * (1 + 1e-9) + 0.5) << f->name();
        }
        ++checked;
    }
    EXPECT_GT(checked, 10u);
    EXPECT_NE(ra.out.find("| latency_ns |"), std::string::npos) << ra.out;
    for (auto d : {a, b, c})
        fs::remove_all(d);
}

TEST(StudyCli, BadParameterIsAUsageError) {
    std::string dir = temp_dir();
    auto r = run_cli("sensitivity -p " + platform("tiny") + " -t probe -o " + dir + " --params hbm.pc_bandwith");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("did you mean 'hbm.pc_bandwidth'"), std::string::npos) << r.err;
    fs::remove_all(dir);
}
