#include "models/link/link_timing.h"

#include <algorithm>

namespace nctlm {

LinkTiming::LinkTiming(const LinkConfig& cfg, uint32_t virtual_channels)
    : wire_(cfg.wire_bandwidth), ns_per_byte_(1e9 / cfg.wire_bandwidth.bytes_per_s), latency_ns_(cfg.latency.ns),
      credits_(virtual_channels) {
    for (SlotTimes& c : credits_)
        c.assign(cfg.credits, 0);
}

LinkTiming::Passage LinkTiming::cross(double head_ns, double tail_ns, double bytes, double now_ns) {
    Occupancy slot = wire_.reserve(head_ns, bytes, now_ns);
    return {slot.start_ns, slot.end_ns, slot.start_ns + latency_ns_, std::max(slot.end_ns, tail_ns) + latency_ns_};
}

} // namespace nctlm
