// The link's loosely-timed path (sim.timing: lt): one b_transport carries a request over the wire
// into the far chip's NoC (whose b_transport takes it on to a stack or the next link) and the
// response back over the opposite wire, on the same LinkTiming as the AT path. Receive slots are
// times at which each is free again: a request takes the earliest (waiting for it if need be) and
// holds it until the far NoC accepted the request (TransferExt::accept_ns).
#include "models/common/sim.h"
#include "models/common/transfer.h"
#include "models/link/neuron_link.h"

#include <algorithm>

namespace nctlm {

void NeuronLink::enable_loosely_timed() {
    for (Direction& d : dirs_)
        for (Channel& c : d.channels)
            c.lt_held = LevelSweep([&c, cap = cfg_.credits](size_t n, double t) { c.occupancy.level(n, cap, t); });
    from_a.register_b_transport(this, &NeuronLink::lt_a);
    from_b.register_b_transport(this, &NeuronLink::lt_b);
}

void NeuronLink::b_transport_lt(int dir, int vc, tlm::tlm_generic_payload& p, sc_core::sc_time& delay) {
    Direction& d = dirs_[size_t(dir)];
    Channel& c = d.channels[size_t(vc)];
    const double t = now_ns() + ns(delay);
    TransferExt& x = ext<TransferExt>(p);
    LinkRouteExt& r = ext<LinkRouteExt>(p);
    c.occupancy.sample(c.lt_present.advance(t));
    c.lt_held.advance(t);
    const double inject = std::max(t, d.timing.credit_free_at(uint32_t(vc)));
    c.wait_ns->add(inject - t);
    double bytes = double(cfg_.request_bytes) + (p.is_write() ? p.get_data_length() : 0);
    // A write's data is all at the link once the NoC delivered it (its tail).
    double ready = std::max(inject, p.is_write() ? x.tail_ns : inject);
    LinkTiming::Passage pass = d.timing.cross(ready, ready, bytes, now_ns());
    const LinkRouteExt::Saved saved{x.src_tile, x.stack};
    r.saved.push_back(saved);
    ++r.hop;
    x.head_ns = pass.head_ns;
    x.tail_ns = pass.tail_ns;
    x.accept_ns = 0;
    sc_core::sc_time to_far = until(pass.tail_ns);
    far(dir, vc)->b_transport(p, to_far);
    const double far_accept = std::max(pass.tail_ns, x.accept_ns);
    d.timing.hold_credit(uint32_t(vc), far_accept);
    c.lt_present.hold(t, far_accept);
    c.lt_held.hold(inject, far_accept);
    double at_far = now_ns() + ns(to_far);
    r.saved.pop_back();
    --r.hop;
    x.src_tile = saved.src_tile;
    x.stack = saved.stack;
    double at_near = at_far;
    if (p.get_response_status() == tlm::TLM_OK_RESPONSE) {
        double back_bytes = p.is_read() ? double(p.get_data_length()) : double(cfg_.request_bytes);
        LinkTiming::Passage back = dirs_[size_t(1 - dir)].timing.cross(at_far, at_far, back_bytes, now_ns());
        x.head_ns = back.head_ns;
        x.tail_ns = back.tail_ns;
        at_near = back.tail_ns;
    }
    x.accept_ns = pass.end_ns;  // the near NoC's next request may go once the wire has taken this one
    delay = until(at_near);
}

} // namespace nctlm
