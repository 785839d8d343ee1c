#include "models/hbm/address_map.h"

#include <stdexcept>

namespace nctlm {

AddressMap::AddressMap(const HbmConfig& c)
    : stacks_(c.stacks), pcs_(c.pseudo_channels), capacity_(c.stack_capacity), interleave_(c.interleave),
      stack_interleave_(c.stack_interleave), interleaved_base_(c.interleaved_base) {
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
    return HbmLocation{stack, uint32_t((offset / interleave_) % pcs_), offset};
}

} // namespace nctlm
