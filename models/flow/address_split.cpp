#include "models/flow/address_split.h"

#include <numeric>

namespace nctlm::flow {

AddressSplit::AddressSplit(const HbmConfig& hbm, const AddressMap& map)
    : hbm_(hbm), map_(map), contiguous_period_(uint64_t(hbm.pseudo_channels) * hbm.interleave),
      interleaved_period_(uint64_t(hbm.stacks) * std::lcm(hbm.stack_interleave, contiguous_period_)) {}

bool AddressSplit::split(uint64_t address, uint64_t bytes, std::vector<double>& on_pc, uint64_t& unmapped) const {
    auto add = [&](uint32_t st, uint32_t p, uint64_t, uint64_t len) { on_pc[st * hbm_.pseudo_channels + p] += double(len); };
    while (bytes > 0) {
        auto loc = map_.map(address);
        if (!loc) {
            unmapped = address;
            return false;
        }
        const bool interleaved = address >= map_.total_bytes();
        const uint64_t window = interleaved ? map_.interleaved_base() : map_.stack_base(loc->stack);
        const uint64_t window_end = window + (interleaved ? map_.total_bytes() : hbm_.stack_capacity);
        const uint64_t segment = std::min(bytes, window_end - address);
        const uint64_t period = interleaved ? interleaved_period_ : contiguous_period_;
        const uint64_t head = std::min(segment, (period - (address - window) % period) % period);
        const uint64_t whole = (segment - head) / period, tail = segment - head - whole * period;
        if (!for_each_piece(address, head, unmapped, add))
            return false;
        if (whole) {
            const uint32_t first = interleaved ? 0 : loc->stack, count = interleaved ? hbm_.stacks : 1;
            const double each = double(whole * period) / double(count * hbm_.pseudo_channels);
            for (uint32_t st = first; st < first + count; ++st)
                for (uint32_t p = 0; p < hbm_.pseudo_channels; ++p)
                    on_pc[st * hbm_.pseudo_channels + p] += each;
        }
        if (!for_each_piece(address + head + whole * period, tail, unmapped, add))
            return false;
        address += segment;
        bytes -= segment;
    }
    return true;
}

namespace {
// The last word of a key of whole aligned periods (split() spreads them evenly, whatever the PC
// hash): no PC pair is this large.
constexpr uint64_t kWholePeriods = ~uint64_t(1);
} // namespace

bool AddressSplit::key(uint64_t address, uint64_t bytes, SplitKey& key) const {
    // The contiguous window's stack without map() (whose PC this does not need); any other address
    // through map(), which refuses what is unmapped.
    const bool interleaved = address >= map_.total_bytes();
    uint32_t stack = 0;
    if (!interleaved) {
        stack = uint32_t(address / hbm_.stack_capacity);
    } else if (auto loc = map_.map(address)) {
        stack = loc->stack;
    } else {
        return false;
    }
    auto put = [&key](uint64_t v) { key.push_back(v); };
    const uint64_t window = interleaved ? map_.interleaved_base() : map_.stack_base(stack);
    const uint64_t window_end = window + (interleaved ? map_.total_bytes() : hbm_.stack_capacity);
    const uint64_t period = interleaved ? interleaved_period_ : contiguous_period_;
    const uint64_t pos = address - window, last = pos + bytes - 1;
    put(interleaved ? ~uint64_t(0) : stack);
    put(bytes);
    put(pos % period);
    if (address + bytes > window_end) {  // crosses a window's end: not like any other
        put(address);
        return true;
    }
    if (pos % period == 0 && bytes % period == 0) {  // whole periods: every PC of its stacks alike
        put(kWholePeriods);
        return true;
    }
    if (!interleaved) {
        put(uint64_t(map_.pc_of(pos)) << 32 | map_.pc_of(last));
        return true;
    }
    // The first and last offset it has in each stack of the interleaved window.
    const uint64_t si = hbm_.stack_interleave, stacks = hbm_.stacks, c0 = pos / si, c1 = last / si;
    for (uint64_t st = 0; st < stacks; ++st) {
        const uint64_t first = c0 + (st + stacks - c0 % stacks) % stacks;
        if (first > c1) {
            put(~uint64_t(0));
            continue;
        }
        const uint64_t final = c1 - (c1 % stacks + stacks - st) % stacks;
        const uint64_t from = first / stacks * si + (first == c0 ? pos % si : 0);
        const uint64_t to = final / stacks * si + (final == c1 ? last % si : si - 1);
        put(uint64_t(map_.pc_of(from)) << 32 | map_.pc_of(to));
    }
    return true;
}

} // namespace nctlm::flow
