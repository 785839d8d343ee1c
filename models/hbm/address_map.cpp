#include "models/hbm/address_map.h"

#include <stdexcept>

namespace nctlm {

AddressMap::AddressMap(const HbmConfig& c)
    : stacks_(c.stacks), pcs_(c.pseudo_channels), capacity_(c.stack_capacity), interleave_(c.interleave),
      stack_interleave_(c.stack_interleave), interleaved_base_(c.interleaved_base), fold_(c.pc_hash == PcHash::Fold) {
    if (interleaved_base_ != 0 && interleaved_base_ < total_bytes())
        throw std::invalid_argument("hbm.interleaved_base overlaps the contiguous window");
}

std::optional<HbmLocation> AddressMap::map(uint64_t address) const {
    uint32_t stack;
    uint64_t offset;
    if (address < total_bytes()) {
        stack = uint32_t(address / capacity_);
        offset = address % capacity_;
    } else if (interleaved_base_ != 0 && address >= interleaved_base_ &&
               address - interleaved_base_ < total_bytes()) {
        uint64_t rel = address - interleaved_base_;
        uint64_t chunk = rel / stack_interleave_;
        stack = uint32_t(chunk % stacks_);
        offset = (chunk / stacks_) * stack_interleave_ + rel % stack_interleave_;
    } else {
        return std::nullopt;
    }
    return HbmLocation{stack, pc_of(offset), offset};
}

uint32_t AddressMap::pc_of(uint64_t offset) const {
    uint64_t chunk = offset / interleave_;
    if (!fold_)
        return uint32_t(chunk % pcs_);
    // Each window of pcs_ consecutive chunks still covers every PC once (its digit sum shifts by a
    // constant), and a stride of a power of two chunks walks every PC instead of a few.
    uint64_t sum = 0;
    for (; chunk; chunk /= pcs_)
        sum += chunk % pcs_;
    return uint32_t(sum % pcs_);
}

} // namespace nctlm
