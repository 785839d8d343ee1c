#include "models/common/csv.h"

namespace nctlm {

std::string csv_field(std::string_view text) {
    bool quote = text.find_first_of(",\"\r\n") != std::string_view::npos ||
                 (!text.empty() && (text.front() == ' ' || text.back() == ' '));
    if (!quote)
        return std::string(text);
    std::string out = "\"";
    for (char c : text) {
        if (c == '"')
            out += '"';
        out += c;
    }
    return out + "\"";
}

CsvWriter& CsvWriter::row(const std::vector<std::string>& fields) {
    for (size_t i = 0; i < fields.size(); ++i) {
        if (i)
            text_ += ',';
        text_ += csv_field(fields[i]);
    }
    text_ += '\n';
    return *this;
}

} // namespace nctlm
