// The timing of one direction of one NeuronLink, as a plain class: the AT module, the LT path and
// any coarser mode (flow) call it, so every mode shares one model of the wire. Pure C++, ns.
//
//   cross(head, tail, bytes, now): the wire carries `bytes` from the earliest slot at or after
//     `head` (a gap-filling LinkSchedule: transfers booked ahead may use an idle gap before a later
//     booking); the data is cut-through, so the far end sees its first byte `latency` after the
//     slot starts and its last byte `latency` after both the slot and the incoming tail end.
//   serialization(bytes), latency_ns(): the two cost rules on their own (for closed forms and
//     flow models that do their own sharing).
//   Credits (loosely-timed path): per virtual channel, `credits` slots, each free again at a time
//     (SlotTimes); a request waits for the earliest and holds it until the far chip accepts it.
#pragma once

#include "models/common/bandwidth_pipe.h"
#include "models/common/slot_times.h"
#include "models/link/link_config.h"

#include <vector>

namespace nctlm {

class LinkTiming {
public:
    LinkTiming(const LinkConfig& cfg, uint32_t virtual_channels);

    struct Passage {
        double start_ns, end_ns;  // the wire's slot
        double head_ns, tail_ns;  // first and last byte at the far end
    };
    Passage cross(double head_ns, double tail_ns, double bytes, double now_ns);
    double serialization(double bytes) const { return bytes * ns_per_byte_; }
    double latency_ns() const { return latency_ns_; }
    double busy_ns() const { return wire_.busy_ns(); }
    double bytes() const { return wire_.bytes(); }

    // Loosely-timed credits of one virtual channel.
    double credit_free_at(uint32_t vc) const { return credits_[vc].earliest(); }
    void hold_credit(uint32_t vc, double until_ns) { credits_[vc].book_earliest(until_ns); }

private:
    LinkSchedule wire_;
    double ns_per_byte_, latency_ns_;
    std::vector<SlotTimes> credits_;
};

} // namespace nctlm
