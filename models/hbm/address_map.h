// The one place that maps an address to (chip, stack, pseudo-channel, offset). Shared by the NoC
// routers and the HBM controllers. Pure C++.
//
// Chips: chip c's memory is seen from every chip at c << chip_address_bit plus its local address
// (NeuronLink memory pooling; chip 0's addresses are the local ones, so a one-chip platform is
// unchanged). Inside a chip, two windows alias the same memory:
//  [0, stacks x capacity)                          stack s owns [s x capacity, (s+1) x capacity)
//  [interleaved_base, interleaved_base + total)   consecutive stack_interleave chunks rotate
//                                                  over the stacks (for spreading, e.g. a KV cache)
// Inside a stack, consecutive `interleave` chunks rotate over the pseudo-channels.
#pragma once

#include "models/hbm/hbm_config.h"

#include <cstdint>
#include <optional>

namespace nctlm {

struct HbmLocation {
    uint32_t chip;
    uint32_t stack;
    uint32_t pseudo_channel;
    uint64_t offset;  // byte offset inside the stack
};

class AddressMap {
public:
    // Throws std::invalid_argument when a chip's windows do not fit below chip_address_bit.
    explicit AddressMap(const HbmConfig& cfg, uint32_t chips = 1, uint32_t chip_address_bit = kDefaultChipBit);
    std::optional<HbmLocation> map(uint64_t address) const;
    uint64_t chip_base(uint32_t chip) const { return uint64_t(chip) << chip_bit_; }
    uint64_t stack_base(uint32_t stack) const { return uint64_t(stack) * capacity_; }
    uint64_t stack_base(uint32_t chip, uint32_t stack) const { return chip_base(chip) + stack_base(stack); }
    uint64_t interleaved_base() const { return interleaved_base_; }
    uint64_t interleaved_base(uint32_t chip) const { return chip_base(chip) + interleaved_base_; }
    uint32_t chips() const { return chips_; }
    uint32_t chip_address_bit() const { return chip_bit_; }
    static constexpr uint32_t kDefaultChipBit = 44;  // 16 TiB per chip
    uint64_t total_bytes() const { return capacity_ * stacks_; }
    uint32_t stacks() const { return stacks_; }
    uint64_t pc_interleave() const { return interleave_; }
    uint32_t pc_of(uint64_t offset) const;  // the pseudo-channel of a stack offset (hbm.pc_hash)

private:
    uint32_t chips_, chip_bit_;
    uint32_t stacks_, pcs_;
    uint64_t capacity_, interleave_, stack_interleave_, interleaved_base_;
    bool fold_;
    // PCs and interleave both powers of two (every shipped platform): pc_of by shifts and masks.
    bool pow2_ = false;
    uint32_t pc_bits_ = 0, interleave_bits_ = 0;
};

} // namespace nctlm
