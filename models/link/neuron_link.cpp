#include "models/link/neuron_link.h"

#include "models/common/burst_trace.h"
#include "models/common/sim.h"
#include "models/common/trace.h"
#include "models/common/transfer.h"

#include <fmt/format.h>

namespace nctlm {

NeuronLink::NeuronLink(sc_core::sc_module_name name, const LinkConfig& cfg, uint32_t virtual_channels)
    : sc_module(name), from_a("from_a"), from_b("from_b"), to_a("to_a"), to_b("to_b"), cfg_(cfg),
      dirs_{Direction{LinkTiming(cfg, virtual_channels), std::vector<Channel>(virtual_channels), -1, "a_to_b", {}},
            Direction{LinkTiming(cfg, virtual_channels), std::vector<Channel>(virtual_channels), -1, "b_to_a", {}}},
      arrive_ab_(this, &NeuronLink::arrive_ab), arrive_ba_(this, &NeuronLink::arrive_ba),
      back_ab_(this, &NeuronLink::back_ab), back_ba_(this, &NeuronLink::back_ba) {
    from_a.register_nb_transport_fw(this, &NeuronLink::fw_a);
    from_b.register_nb_transport_fw(this, &NeuronLink::fw_b);
    to_b.register_nb_transport_bw(this, &NeuronLink::bw_b);
    to_a.register_nb_transport_bw(this, &NeuronLink::bw_a);
    for (Direction& d : dirs_) {
        if (nctlm::trace().enabled())
            d.track = nctlm::trace().track(this->name(), d.name);
        for (uint32_t vc = 0; vc < d.channels.size(); ++vc) {
            Channel& c = d.channels[vc];
            std::string base = fmt::format("{}.{}.vc{}", this->name(), d.name, vc);
            c.credits = cfg.credits;
            c.occupancy.register_as(base + ".slots");
            c.occupancy.track.open(this->name(), fmt::format("{} vc{} slots in use", d.name, vc));
            c.wait_ns = &stats().histogram(base + ".wait_ns", "ns");
        }
    }
}

tlm::tlm_sync_enum NeuronLink::fw(int dir, int vc, tlm::tlm_generic_payload& p, tlm::tlm_phase& phase,
                                  sc_core::sc_time& delay) {
    Channel& c = dirs_[size_t(dir)].channels[size_t(vc)];
    if (phase == tlm::END_RESP) {
        c.near_busy = false;
        send_near(dir, uint32_t(vc));
        return tlm::TLM_COMPLETED;
    }
    if (phase != tlm::BEGIN_REQ)
        return tlm::TLM_ACCEPTED;
    double now = now_ns() + ns(delay);
    c.occupancy.sample(cfg_.credits - c.credits + c.waiting.size());
    if (c.credits == 0 || !c.waiting.empty()) {
        c.waiting.push_back({&p, now});
        return tlm::TLM_ACCEPTED;  // END_REQ once a receive slot frees
    }
    --c.credits;
    c.occupancy.level(cfg_.credits - c.credits, cfg_.credits, now);
    c.wait_ns->add(0);
    double taken = send_over(dir, uint32_t(vc), p, now);
    phase = tlm::END_REQ;
    delay = until(taken);
    return tlm::TLM_UPDATED;
}

double NeuronLink::send_over(int dir, uint32_t vc, tlm::tlm_generic_payload& p, double ready_ns) {
    Direction& d = dirs_[size_t(dir)];
    TransferExt& x = ext<TransferExt>(p);
    LinkRouteExt& r = ext<LinkRouteExt>(p);
    double bytes = double(cfg_.request_bytes) + (p.is_write() ? p.get_data_length() : 0);
    LinkTiming::Passage pass = d.timing.cross(ready_ns, ready_ns, bytes, now_ns());
    if (d.track >= 0)
        nctlm::trace().span(d.track, p.is_read() ? "read request" : "write data", pass.start_ns, pass.end_ns,
                            burst_span_args(p, uint64_t(bytes)));
    // The next chip's NoC routes with these fields; the response puts them back.
    r.saved.push_back({x.src_tile, x.stack});
    ++r.hop;
    x.head_ns = pass.head_ns;
    x.tail_ns = pass.tail_ns;
    (void)vc;
    arrive_peq(dir).notify_at(p, tlm::BEGIN_REQ, pass.tail_ns);
    return pass.end_ns;
}

void NeuronLink::arrive(int dir, tlm::tlm_generic_payload& p) {
    const LinkRouteExt& r = ext<LinkRouteExt>(p);
    uint32_t vc = r.route.at(r.hop - 1).vc;
    dirs_[size_t(dir)].channels[vc].ready.push_back(&p);
    send_far(dir, vc);
}

void NeuronLink::send_far(int dir, uint32_t vc) {
    Channel& c = dirs_[size_t(dir)].channels[vc];
    while (!c.far_busy && !c.ready.empty()) {
        tlm::tlm_generic_payload& p = *c.ready.front();
        c.ready.pop_front();
        tlm::tlm_phase phase = tlm::BEGIN_REQ;
        sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
        tlm::tlm_sync_enum s = far(dir, int(vc))->nb_transport_fw(p, phase, delay);
        if (s == tlm::TLM_ACCEPTED) {
            c.far_busy = true;  // the far NoC has no credit for it yet: END_REQ comes later
            return;
        }
        slot_freed(dir, vc);
        if (s == tlm::TLM_COMPLETED)  // refused there (address error): its answer goes back now
            back_peq(dir).notify_at(p, tlm::BEGIN_RESP, carry_back(dir, p, now_ns()));
    }
}

void NeuronLink::slot_freed(int dir, uint32_t vc) {
    Channel& c = dirs_[size_t(dir)].channels[vc];
    ++c.credits;
    double now = now_ns();
    c.occupancy.level(cfg_.credits - c.credits, cfg_.credits, now);
    if (c.waiting.empty())
        return;
    Waiting w = c.waiting.front();
    c.waiting.pop_front();
    --c.credits;
    c.occupancy.level(cfg_.credits - c.credits, cfg_.credits, now);
    c.wait_ns->add(now - w.since_ns);
    double taken = send_over(dir, vc, *w.p, now);
    tlm::tlm_phase phase = tlm::END_REQ;
    sc_core::sc_time delay = until(taken);
    near(dir, int(vc))->nb_transport_bw(*w.p, phase, delay);
}

tlm::tlm_sync_enum NeuronLink::bw(int dir, int vc, tlm::tlm_generic_payload& p, tlm::tlm_phase& phase) {
    if (phase == tlm::END_REQ) {
        dirs_[size_t(dir)].channels[size_t(vc)].far_busy = false;
        slot_freed(dir, uint32_t(vc));
        send_far(dir, uint32_t(vc));
        return tlm::TLM_ACCEPTED;
    }
    if (phase != tlm::BEGIN_RESP)
        return tlm::TLM_ACCEPTED;
    back_peq(dir).notify_at(p, tlm::BEGIN_RESP, carry_back(dir, p, now_ns()));
    phase = tlm::END_RESP;  // never refused
    return tlm::TLM_UPDATED;
}

double NeuronLink::carry_back(int dir, tlm::tlm_generic_payload& p, double ready_ns) {
    Direction& d = dirs_[size_t(1 - dir)];
    TransferExt& x = ext<TransferExt>(p);
    LinkRouteExt& r = ext<LinkRouteExt>(p);
    LinkRouteExt::Saved s = r.saved.back();
    r.saved.pop_back();
    --r.hop;
    x.src_tile = s.src_tile;
    x.stack = s.stack;
    if (p.get_response_status() != tlm::TLM_OK_RESPONSE && p.get_response_status() != tlm::TLM_INCOMPLETE_RESPONSE) {
        x.head_ns = x.tail_ns = ready_ns;
        return ready_ns;
    }
    double bytes = p.is_read() ? double(p.get_data_length()) : double(cfg_.request_bytes);
    LinkTiming::Passage pass = d.timing.cross(ready_ns, ready_ns, bytes, now_ns());
    if (d.track >= 0)
        nctlm::trace().span(d.track, p.is_read() ? "read data" : "write ack", pass.start_ns, pass.end_ns,
                            burst_span_args(p, uint64_t(bytes)));
    x.head_ns = pass.head_ns;
    x.tail_ns = pass.tail_ns;
    return pass.tail_ns;
}

void NeuronLink::back(int dir, tlm::tlm_generic_payload& p) {
    const LinkRouteExt& r = ext<LinkRouteExt>(p);
    uint32_t vc = r.route.at(r.hop).vc;
    dirs_[size_t(dir)].channels[vc].answers.push_back(&p);
    send_near(dir, vc);
}

void NeuronLink::send_near(int dir, uint32_t vc) {
    Channel& c = dirs_[size_t(dir)].channels[vc];
    while (!c.near_busy && !c.answers.empty()) {
        tlm::tlm_generic_payload& p = *c.answers.front();
        c.answers.pop_front();
        tlm::tlm_phase phase = tlm::BEGIN_RESP;
        sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
        if (near(dir, int(vc))->nb_transport_bw(p, phase, delay) == tlm::TLM_ACCEPTED)
            c.near_busy = true;  // END_RESP comes on the forward path
    }
}

void NeuronLink::end_of_simulation() {
    double elapsed = now_ns();
    for (Direction& d : dirs_) {
        for (Channel& c : d.channels) {  // lt: the occupancy changes up to the end
            c.lt_present.advance(elapsed);
            c.lt_held.advance(elapsed);
        }
        std::string base = std::string(name()) + "." + d.name;
        const double flow_bytes = d.flow_bytes ? d.flow_bytes() : 0;
        const double busy = d.timing.busy_ns() + d.timing.serialization(flow_bytes);
        stats().counter(base + ".bytes", "B").value = d.timing.bytes() + flow_bytes;
        stats().counter(base + ".utilization", "").value = elapsed > 0 ? busy / elapsed : 0;
    }
}

} // namespace nctlm
