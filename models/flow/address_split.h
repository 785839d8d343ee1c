// Where a transfer's bytes land: bytes per stack x pseudo-channel of [address, +bytes), exactly,
// at a cost that does not grow with its size (whole aligned periods of the address map cover every
// PC of their stacks alike; only the head and tail are walked piece by piece), and a key naming its
// shape: two transfers with equal keys put equal bytes on the same PCs. Pure C++, for the flow mode.
#pragma once

#include "models/hbm/address_map.h"
#include "models/hbm/hbm_config.h"

#include <cstdint>
#include <vector>

namespace nctlm::flow {

// A transfer's shape key (AddressSplit::key): a few words, hashed and compared as integers (it is
// looked up once per descriptor; a string and its byte hash cost more than the rest of the lookup).
using SplitKey = std::vector<uint64_t>;
struct SplitKeyHash {
    size_t operator()(const SplitKey& key) const noexcept {
        uint64_t h = key.size();
        for (uint64_t w : key) {  // multiply-xorshift per word (splitmix64's finalizer)
            h ^= w + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
            h = (h ^ (h >> 31)) * 0xbf58476d1ce4e5b9ull;
        }
        return size_t(h ^ (h >> 29));
    }
};

class AddressSplit {
public:
    AddressSplit(const HbmConfig& hbm, const AddressMap& map);
    // Adds the bytes of each stack x PC (index stack x pseudo_channels + pc) to `on_pc` (sized
    // stacks x pseudo_channels). False at the first unmapped address (`unmapped` set).
    bool split(uint64_t address, uint64_t bytes, std::vector<double>& on_pc, uint64_t& unmapped) const;
    // Calls fn(stack, pc, stack_offset, bytes) for each piece one PC holds contiguously, in order.
    template <class F> bool for_each_piece(uint64_t address, uint64_t bytes, uint64_t& unmapped, F&& fn) const {
        const uint64_t end = address + bytes;
        while (address < end) {
            auto loc = map_.map(address);
            if (!loc) {
                unmapped = address;
                return false;
            }
            uint64_t len = std::min(end - address, hbm_.interleave - loc->offset % hbm_.interleave);
            if (address >= map_.total_bytes()) {  // interleaved window: a stack chunk ends too
                const uint64_t rel = address - map_.interleaved_base();
                len = std::min(len, hbm_.stack_interleave - rel % hbm_.stack_interleave);
            }
            fn(loc->stack, loc->pseudo_channel, loc->offset, len);
            address += len;
        }
        return true;
    }
    // Appends to `key` what makes two transfers' splits equal: their window, where they start in it
    // modulo its period, their size, and the PC their first and last bytes land on in each stack
    // (hbm.pc_hash: fold rotates the PCs of each aligned block), or, for whole aligned periods, a
    // mark that it covers every PC of its stacks alike. False, key untouched, if the first byte is
    // unmapped.
    bool key(uint64_t address, uint64_t bytes, SplitKey& key) const;

private:
    HbmConfig hbm_;
    AddressMap map_;
    uint64_t contiguous_period_, interleaved_period_;
};

} // namespace nctlm::flow
