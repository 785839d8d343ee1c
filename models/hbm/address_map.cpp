#include "models/hbm/address_map.h"

#include <algorithm>
#include <stdexcept>

namespace nctlm {

AddressMap::AddressMap(const HbmConfig& c, uint32_t chips, uint32_t chip_address_bit)
    : chips_(chips), chip_bit_(chip_address_bit), stacks_(c.stacks), pcs_(c.pseudo_channels), capacity_(c.stack_capacity), interleave_(c.interleave),
      stack_interleave_(c.stack_interleave), interleaved_base_(c.interleaved_base), fold_(c.pc_hash == PcHash::Fold) {
    if (interleaved_base_ != 0 && interleaved_base_ < total_bytes())
        throw std::invalid_argument("hbm.interleaved_base overlaps the contiguous window");
    if (chips_ == 0 || chip_bit_ < 20 || chip_bit_ > 62 || (uint64_t(chips_ - 1) >> (63 - chip_bit_)) != 0)
        throw std::invalid_argument("platform.chip_address_bit leaves no room for the chips' indices");
    uint64_t top = std::max(total_bytes(), interleaved_base_ == 0 ? 0 : interleaved_base_ + total_bytes());
    if (top > (uint64_t(1) << chip_bit_))
        throw std::invalid_argument("a chip's address windows reach past platform.chip_address_bit");
    auto pow2 = [](uint64_t v) { return v != 0 && (v & (v - 1)) == 0; };
    pow2_ = pcs_ >= 2 && pow2(pcs_) && pow2(interleave_);
    if (pow2_) {
        pc_bits_ = uint32_t(__builtin_ctzll(pcs_));
        interleave_bits_ = uint32_t(__builtin_ctzll(interleave_));
    }
}

std::optional<HbmLocation> AddressMap::map(uint64_t full_address) const {
    const uint64_t chip = full_address >> chip_bit_;
    if (chip >= chips_)
        return std::nullopt;
    const uint64_t address = full_address & ((uint64_t(1) << chip_bit_) - 1);
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
    return HbmLocation{uint32_t(chip), stack, pc_of(offset), offset};
}

uint32_t AddressMap::pc_of(uint64_t offset) const {
    if (pow2_) {  // the same digits as below, by shifts and masks
        const uint64_t mask = pcs_ - 1;
        uint64_t chunk = offset >> interleave_bits_;
        if (!fold_)
            return uint32_t(chunk & mask);
        uint64_t sum = 0;
        for (; chunk; chunk >>= pc_bits_)
            sum += chunk & mask;
        return uint32_t(sum & mask);
    }
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
