#include "models/common/units.h"

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
