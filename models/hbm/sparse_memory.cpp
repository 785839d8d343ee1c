#include "models/hbm/sparse_memory.h"

#include <algorithm>
#include <cstring>

namespace nctlm {

void SparseMemory::write(uint64_t offset, const unsigned char* data, uint64_t length) {
    while (length > 0) {
        uint64_t page = offset / kPageBytes, in = offset % kPageBytes;
        uint64_t n = std::min(length, kPageBytes - in);
        auto& p = pages_[page];
        if (!p)
            p = std::make_unique<Page>(Page{});
        std::memcpy(p->data() + in, data, n);
        offset += n;
        data += n;
        length -= n;
    }
}

void SparseMemory::read(uint64_t offset, unsigned char* data, uint64_t length) const {
    while (length > 0) {
        uint64_t page = offset / kPageBytes, in = offset % kPageBytes;
        uint64_t n = std::min(length, kPageBytes - in);
        auto it = pages_.find(page);
        if (it == pages_.end())
            std::memset(data, 0, n);
        else
            std::memcpy(data, it->second->data() + in, n);
        offset += n;
        data += n;
        length -= n;
    }
}

} // namespace nctlm
