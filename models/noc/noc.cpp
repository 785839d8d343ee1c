#include "models/noc/noc.h"

#include "models/common/sim.h"
#include "models/common/trace.h"
#include "models/common/transfer.h"

#include <algorithm>

namespace nctlm {

Noc::Noc(sc_core::sc_module_name name, const NocConfig& cfg, const AddressMap& map, uint32_t tiles)
    : sc_module(name), tile_sockets("tile_sockets"), stack_sockets("stack_sockets"), cfg_(cfg), map_(map),
      topology_(tiles, map.stacks()), hop_ns_(cfg.hop_latency().ns), req_peq_(this, &Noc::deliver_request),
      resp_peq_(this, &Noc::deliver_response),
      address_errors_(stats().counter(std::string(this->name()) + ".address_errors", "")),
      bursts_(stats().counter(std::string(this->name()) + ".bursts", "")) {
    tile_sockets.register_nb_transport_fw(this, &Noc::fw_from_tile);
    stack_sockets.register_nb_transport_bw(this, &Noc::bw_from_stack);
    for (size_t l = 0; l < topology_.links(); ++l) {
        LinkKind k = topology_.kind(l);
        bool ring = k == LinkKind::RingClockwise || k == LinkKind::RingCounter;
        links_.push_back({LinkSchedule(ring ? cfg.ring_bandwidth : cfg.link_bandwidth),
                          nctlm::trace().enabled() ? nctlm::trace().track(this->name(), topology_.link_name(l)) : -1});
    }
}

double Noc::traverse(const std::vector<uint32_t>& route, tlm::tlm_generic_payload& p, double bytes) {
    TransferExt& x = ext<TransferExt>(p);
    double head = x.head_ns, tail = x.tail_ns, first_end = 0, now = now_ns();
    for (size_t i = 0; i < route.size(); ++i) {
        Link& link = links_[route[i]];
        Occupancy occ = link.pipe.reserve(head, bytes, now);
        if (i == 0)
            first_end = occ.end_ns;
        if (link.track >= 0)
            nctlm::trace().span(link.track, p.is_read() ? "read" : "write", occ.start_ns, occ.end_ns);
        head = occ.start_ns + hop_ns_;
        tail = std::max(occ.end_ns, tail) + hop_ns_;
    }
    x.head_ns = head;
    x.tail_ns = tail;
    return first_end;
}

tlm::tlm_sync_enum Noc::fw_from_tile(int tile, tlm::tlm_generic_payload& p, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay) {
    if (phase != tlm::BEGIN_REQ)
        return tlm::TLM_ACCEPTED;  // END_RESP never comes: tiles complete responses in the call
    auto loc = map_.map(p.get_address());
    if (!loc) {
        address_errors_.add(1);
        p.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        return tlm::TLM_COMPLETED;
    }
    bursts_.add(1);
    TransferExt& x = ext<TransferExt>(p);
    x.src_tile = uint32_t(tile);
    x.stack = loc->stack;
    double now = now_ns() + ns(delay);
    if (p.is_read())
        x.head_ns = x.tail_ns = now;  // only a header travels
    double bytes = double(cfg_.request_bytes) + (p.is_write() ? p.get_data_length() : 0);
    double accepted = traverse(topology_.request_route(uint32_t(tile), loc->stack), p, bytes);
    req_peq_.notify(p, tlm::BEGIN_REQ, until(x.tail_ns));
    // Accepted once the first link has taken the request: the DMA channel may move on.
    phase = tlm::END_REQ;
    delay = until(accepted);
    return tlm::TLM_UPDATED;
}

void Noc::deliver_request(tlm::tlm_generic_payload& p, const tlm::tlm_phase&) {
    TransferExt& x = ext<TransferExt>(p);
    tlm::tlm_phase phase = tlm::BEGIN_REQ;
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    tlm::tlm_sync_enum s = stack_sockets[x.stack]->nb_transport_fw(p, phase, delay);
    if (s == tlm::TLM_COMPLETED)  // the controller refused it (address error): answer the tile now
        tile_sockets[x.src_tile]->nb_transport_bw(p, phase = tlm::BEGIN_RESP, delay);
}

tlm::tlm_sync_enum Noc::bw_from_stack(int stack, tlm::tlm_generic_payload& p, tlm::tlm_phase& phase,
                                      sc_core::sc_time&) {
    if (phase != tlm::BEGIN_RESP)
        return tlm::TLM_ACCEPTED;
    TransferExt& x = ext<TransferExt>(p);
    double bytes = p.is_read() ? double(p.get_data_length()) : double(cfg_.request_bytes);
    traverse(topology_.response_route(uint32_t(stack), x.src_tile), p, bytes);
    resp_peq_.notify(p, tlm::BEGIN_RESP, until(x.tail_ns));
    phase = tlm::END_RESP;
    return tlm::TLM_UPDATED;
}

void Noc::deliver_response(tlm::tlm_generic_payload& p, const tlm::tlm_phase& phase) {
    tlm::tlm_phase ph = phase;
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    tile_sockets[ext<TransferExt>(p).src_tile]->nb_transport_bw(p, ph, delay);
}

void Noc::end_of_simulation() {
    double elapsed = now_ns();
    for (size_t l = 0; l < links_.size(); ++l) {
        std::string base = std::string(name()) + "." + topology_.link_name(l);
        stats().counter(base + ".bytes", "B").value = links_[l].pipe.bytes();
        stats().counter(base + ".utilization", "").value = elapsed > 0 ? links_[l].pipe.busy_ns() / elapsed : 0;
    }
}

} // namespace nctlm
