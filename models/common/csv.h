// CSV as RFC 4180 writes it: fields separated by commas, a field quoted when it holds a comma, a
// double quote, CR or LF (or starts or ends with a space, which some readers trim), a quote inside
// doubled. Rows end in LF (Python's csv module, pandas and spreadsheets read either ending). Every
// CSV nctlm writes goes through this (tests/unit/test_csv.cpp; a test parses each with Python).
// Pure C++.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace nctlm {

// One field, quoted if it needs to be.
std::string csv_field(std::string_view text);

// Rows of fields; every row should have as many fields as the header.
class CsvWriter {
public:
    explicit CsvWriter(const std::vector<std::string>& header) { row(header); }
    CsvWriter& row(const std::vector<std::string>& fields);
    const std::string& text() const { return text_; }

private:
    std::string text_;
};

} // namespace nctlm
