// Byte storage for a huge address space that allocates only the pages touched: a 32 GiB HBM
// must not allocate 32 GiB. Unwritten bytes read as zero. Pure C++.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <unordered_map>

namespace nctlm {

class SparseMemory {
public:
    static constexpr uint64_t kPageBytes = 64 * 1024;
    void write(uint64_t offset, const unsigned char* data, uint64_t length);
    void read(uint64_t offset, unsigned char* data, uint64_t length) const;
    size_t pages() const { return pages_.size(); }

private:
    using Page = std::array<unsigned char, kPageBytes>;
    std::unordered_map<uint64_t, std::unique_ptr<Page>> pages_;
};

} // namespace nctlm
