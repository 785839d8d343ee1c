// The RFC 4180 writer every CSV of nctlm goes through (models/common/csv.h).
#include "models/common/csv.h"

#include <gtest/gtest.h>

using namespace nctlm;

TEST(Csv, PlainFieldsStayBare) {
    EXPECT_EQ(csv_field("latency_ns"), "latency_ns");
    EXPECT_EQ(csv_field("25.6 GB/s"), "25.6 GB/s");
    EXPECT_EQ(csv_field(""), "");
}

TEST(Csv, CommaQuoteAndLineBreaksAreQuotedWithQuotesDoubled) {
    EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
    EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
    EXPECT_EQ(csv_field("two\nlines"), "\"two\nlines\"");
    EXPECT_EQ(csv_field("cr\r"), "\"cr\r\"");
    EXPECT_EQ(csv_field("\""), "\"\"\"\"");
}

TEST(Csv, EdgeSpacesAreQuotedSoNoReaderTrimsThem) {
    EXPECT_EQ(csv_field(" x"), "\" x\"");
    EXPECT_EQ(csv_field("x "), "\"x \"");
    EXPECT_EQ(csv_field("a b"), "a b");
}

TEST(Csv, RowsJoinFieldsAndEndInNewline) {
    CsvWriter w({"parameter", "plausible"});
    w.row({"hbm.pc_bandwidth", "x0.5..x2, \"assumed\""});
    EXPECT_EQ(w.text(), "parameter,plausible\nhbm.pc_bandwidth,\"x0.5..x2, \"\"assumed\"\"\"\n");
}
