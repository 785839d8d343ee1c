#include "models/common/stats.h"
#include "models/common/units.h"

#include <cmath>

#include <gtest/gtest.h>

using namespace nctlm;

TEST(Units, ParsesBytesWithBinaryAndDecimalPrefixes) {
    EXPECT_EQ(parse_bytes("32 KiB"), 32768u);
    EXPECT_EQ(parse_bytes("2KiB"), 2048u);
    EXPECT_EQ(parse_bytes("16 GiB"), 16ull << 30);
    EXPECT_EQ(parse_bytes("64 B"), 64u);
    EXPECT_EQ(parse_bytes("1 MB"), 1000000u);
}

TEST(Units, ParsesFrequencyBandwidthDuration) {
    EXPECT_DOUBLE_EQ(parse_frequency("1.4 GHz").hz, 1.4e9);
    EXPECT_DOUBLE_EQ(parse_bandwidth("410 GB/s").bytes_per_s, 410e9);
    EXPECT_DOUBLE_EQ(parse_bandwidth("17 B/ns").bytes_per_s, 17e9);
    EXPECT_DOUBLE_EQ(parse_bandwidth("1 GiB/s").bytes_per_s, 1073741824.0);
    EXPECT_DOUBLE_EQ(parse_duration("60 ns").ns, 60);
    EXPECT_DOUBLE_EQ(parse_duration("1.3 us").ns, 1300);
    EXPECT_DOUBLE_EQ(parse_duration("0.67 ms").ns, 670000);
}

TEST(Units, RejectsMissingWrongAndNegativeUnits) {
    EXPECT_THROW(parse_bytes("32"), UnitError);
    EXPECT_THROW(parse_bytes("32 GHz"), UnitError);
    EXPECT_THROW(parse_bytes("1.5 B"), UnitError);
    EXPECT_THROW(parse_frequency("fast"), UnitError);
    EXPECT_THROW(parse_bandwidth("0 GB/s"), UnitError);
    EXPECT_THROW(parse_duration("-3 ns"), UnitError);
    try {
        parse_bytes("32 KB/s");
        FAIL();
    } catch (const UnitError& e) {
        EXPECT_NE(std::string(e.what()).find("unknown unit 'KB/s'"), std::string::npos) << e.what();
    }
}

TEST(Units, ClockAndBandwidthConvertToTime) {
    EXPECT_NEAR(parse_frequency("1.4 GHz").cycles(7).ns, 5.0, 1e-12);
    EXPECT_NEAR(parse_bandwidth("25.6 GB/s").transfer(2048).ns, 80.0, 1e-12);
    EXPECT_NEAR(parse_bandwidth("1024 GB/s").transfer(64).ns, 0.0625, 1e-15);
}

TEST(Units, FormatRoundTrips) {
    for (const char* t : {"32 KiB", "64 B", "16 GiB", "3 B"})
        EXPECT_EQ(format_bytes(parse_bytes(t)), t);
    EXPECT_EQ(format_frequency(parse_frequency("1.4 GHz")), "1.4 GHz");
    EXPECT_EQ(format_bandwidth(parse_bandwidth("27.2 GB/s")), "27.2 GB/s");
    EXPECT_EQ(format_duration(parse_duration("29 ns")), "29 ns");
    EXPECT_DOUBLE_EQ(parse_duration(format_duration(parse_duration("1300 ns"))).ns, 1300);
}

// Issue 12 "stats noise": differences of absolute times in double printed a latency of
// 150.00000000000003 ns and a wait_ns.min of -1.1e-13; stats in ns are reported on the fs grid.
TEST(StatsNoise, Latency150Point00000000000003AndWaitMinus1e13OnTheFsGrid) {
    StatsRegistry reg;
    Histogram& wait = reg.histogram("top.pc0.wait_ns", "ns");
    wait.add(-1.1e-13);
    wait.add(0.1 + 0.2);  // 0.30000000000000004
    Histogram& latency = reg.histogram("top.latency_ns", "ns");
    latency.add(150.00000000000003);
    reg.counter("top.busy_ns", "ns").add(150.00000000000003);
    nlohmann::json j = reg.to_json();
    EXPECT_EQ(j["top"]["pc0"]["wait_ns"]["min"].get<double>(), 0.0);
    EXPECT_FALSE(std::signbit(j["top"]["pc0"]["wait_ns"]["min"].get<double>())) << "printed as -0";
    EXPECT_EQ(j["top"]["pc0"]["wait_ns"]["max"].get<double>(), 0.3);
    EXPECT_EQ(j["top"]["latency_ns"]["p50"].get<double>(), 150.0);
    EXPECT_EQ(j["top"]["latency_ns"]["mean"].get<double>(), 150.0);
    EXPECT_EQ(j["top"]["busy_ns"].get<double>(), 150.0);
    EXPECT_EQ(on_fs_grid(1e12), 1e12) << "beyond 2^53 fs the value is left alone";
}
