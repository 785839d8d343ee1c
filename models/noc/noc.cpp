#include "models/noc/noc.h"

#include "models/common/burst_trace.h"
#include "models/common/sim.h"
#include "models/common/trace.h"

#include <algorithm>
#include <fmt/format.h>

namespace nctlm {

Noc::Noc(sc_core::sc_module_name name, const NocConfig& cfg, const AddressMap& map, uint32_t tiles,
         const ChipTopology* chips, uint32_t chip)
    : sc_module(name), tile_sockets("tile_sockets"), stack_sockets("stack_sockets"), link_sockets("link_sockets"),
      cfg_(cfg), map_(map), chips_(chips ? std::optional<ChipTopology>(*chips) : std::nullopt), chip_(chip),
      tiles_(tiles), stacks_(map.stacks()), topology_(tiles, map.stacks(), chips ? chips->ports() : 0),
      hop_ns_(cfg.hop_latency().ns),
      ports_(map.stacks() + topology_.link_ports() * kVirtualChannels),
      tile_responses_(tiles + topology_.link_ports() * kVirtualChannels), req_peq_(this, &Noc::deliver_request),
      resp_peq_(this, &Noc::deliver_response),
      address_errors_(stats().counter(std::string(this->name()) + ".address_errors", "")),
      bursts_(stats().counter(std::string(this->name()) + ".bursts", "")) {
    tile_sockets.register_nb_transport_fw(this, &Noc::fw_from_tile);
    stack_sockets.register_nb_transport_bw(this, &Noc::bw_from_stack);
    link_sockets.register_nb_transport_bw(this, &Noc::bw_from_link);
    for (size_t l = 0; l < topology_.links(); ++l) {
        LinkKind k = topology_.kind(l);
        bool ring = k == LinkKind::RingClockwise || k == LinkKind::RingCounter;
        links_.push_back({LinkSchedule(ring ? cfg.ring_bandwidth : cfg.link_bandwidth),
                          nctlm::trace().enabled() ? nctlm::trace().track(this->name(), topology_.link_name(l)) : -1});
    }
    for (uint32_t d = 0; d < ports_.size(); ++d) {
        std::string what = d < stacks_ ? fmt::format("stack{}", d)
                                       : fmt::format("link{}_vc{}", (d - stacks_) / kVirtualChannels,
                                                     (d - stacks_) % kVirtualChannels);
        std::string base = fmt::format("{}.{}_port", this->name(), what);
        ports_[d].credits = cfg.port_buffer;
        ports_[d].occupancy.register_as(base);
        ports_[d].occupancy.track.open(this->name(), what + " port credits in use");
        ports_[d].wait_ns = &stats().histogram(base + ".wait_ns", "ns");
    }
}

double Noc::traverse(const std::vector<uint32_t>& route, tlm::tlm_generic_payload& p, TransferExt& x,
                     double bytes, bool response) {
    double head = x.head_ns, tail = x.tail_ns, first_end = 0, now = now_ns();
    for (size_t i = 0; i < route.size(); ++i) {
        Link& link = links_[route[i]];
        Occupancy occ = link.pipe.reserve(head, bytes, now);
        if (i == 0)
            first_end = occ.end_ns;
        // What moves: a read's request header and data, a write's data and ack. Cut-through, the
        // link carries the data until its last byte has come in (tail) and gone out.
        if (link.track >= 0)
            nctlm::trace().span(link.track,
                                p.is_read() ? (response ? "read data" : "read request")
                                            : (response ? "write ack" : "write data"),
                                occ.start_ns, std::max(occ.end_ns, tail), burst_span_args(p, uint64_t(bytes)));
        head = occ.start_ns + hop_ns_;
        tail = std::max(occ.end_ns, tail) + hop_ns_;
    }
    x.head_ns = head;
    x.tail_ns = tail;
    return first_end;
}

std::optional<uint32_t> Noc::destination(tlm::tlm_generic_payload& p) {
    auto loc = map_.map(p.get_address());
    if (!loc)
        return std::nullopt;
    if (loc->chip == chip_)
        return loc->stack;
    if (!chips_)
        return std::nullopt;
    LinkRouteExt* r = p.get_extension<LinkRouteExt>();
    if (!r) {  // leaving its own chip: the whole route, fixed now (the dateline rule spans it)
        if (spare_routes_.empty())
            spare_routes_.push_back(std::make_unique<LinkRouteExt>());
        r = spare_routes_.back().release();
        spare_routes_.pop_back();
        r->source_chip = chip_;
        r->dest_chip = loc->chip;
        r->route = chips_->route(chip_, loc->chip);
        r->hop = 0;
        r->saved.clear();
        p.set_extension(r);
    }
    const ChipTopology::Hop& h = r->next();
    return stacks_ + h.port * kVirtualChannels + h.vc;
}

void Noc::release_route_ext(tlm::tlm_generic_payload& p) {
    LinkRouteExt* r = p.get_extension<LinkRouteExt>();
    if (!r || r->source_chip != chip_ || r->hop != 0)
        return;
    p.clear_extension(r);
    spare_routes_.emplace_back(r);
}

tlm::tlm_sync_enum Noc::fw_from_tile(int tile, tlm::tlm_generic_payload& p, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay) {
    if (phase == tlm::END_RESP) {
        tile_responses_[size_t(tile)].busy = false;
        send_to_tile(uint32_t(tile));
        return tlm::TLM_COMPLETED;
    }
    if (phase != tlm::BEGIN_REQ)
        return tlm::TLM_ACCEPTED;
    auto dest = destination(p);
    if (!dest) {
        address_errors_.add(1);
        p.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        return tlm::TLM_COMPLETED;
    }
    bursts_.add(1);
    double now = now_ns() + ns(delay);
    TransferExt* x = routing_ext(p, now);
    x->src_tile = uint32_t(tile);
    x->stack = *dest;
    Port& port = ports_[*dest];
    port.occupancy.sample(cfg_.port_buffer - port.credits + port.waiting.size());
    if (port.credits == 0 || !port.waiting.empty()) {
        port.waiting.push_back({tile, &p, x, now});
        return tlm::TLM_ACCEPTED;  // END_REQ when a credit returns
    }
    --port.credits;
    port.occupancy.level(cfg_.port_buffer - port.credits, cfg_.port_buffer, now);
    port.wait_ns->add(0);
    double accepted = inject(p, *x, now);
    // Accepted once the first link has taken the request: the DMA channel may move on.
    phase = tlm::END_REQ;
    delay = until(accepted);
    return tlm::TLM_UPDATED;
}

TransferExt* Noc::routing_ext(tlm::tlm_generic_payload& p, double now_ns) {
    if (TransferExt* x = p.get_extension<TransferExt>())
        return x;
    // A plain payload: the first hop carries the routing state, removed before the response.
    if (spare_exts_.empty())
        spare_exts_.push_back(std::make_unique<TransferExt>());
    TransferExt* x = spare_exts_.back().release();
    spare_exts_.pop_back();
    *x = TransferExt{};
    x->attached_by_noc = true;
    x->head_ns = x->tail_ns = now_ns;  // its write data is all here now
    p.set_extension(x);
    return x;
}

void Noc::release_routing_ext(tlm::tlm_generic_payload& p, TransferExt* x) {
    if (!x->attached_by_noc)
        return;
    p.clear_extension(x);
    spare_exts_.emplace_back(x);
}

double Noc::book_request(tlm::tlm_generic_payload& p, TransferExt& x, double ready_ns) {
    if (p.is_read())
        x.head_ns = x.tail_ns = ready_ns;  // only a header travels
    double bytes = double(cfg_.request_bytes) + (p.is_write() ? p.get_data_length() : 0);
    return traverse(topology_.request_route(topology_initiator(x.src_tile), topology_dest(x.stack)), p, x, bytes,
                    false);
}

double Noc::inject(tlm::tlm_generic_payload& p, TransferExt& x, double ready_ns) {
    double accepted = book_request(p, x, ready_ns);
    req_peq_.notify_at(p, tlm::BEGIN_REQ, x.tail_ns);
    return accepted;
}

void Noc::deliver_request(tlm::tlm_generic_payload& p, const tlm::tlm_phase&) {
    uint32_t dest = ext<TransferExt>(p).stack;
    ports_[dest].ready.push_back(&p);
    send_to_dest(dest);
}

void Noc::send_to_dest(uint32_t dest) {
    Port& port = ports_[dest];
    while (!port.controller_busy && !port.ready.empty()) {
        tlm::tlm_generic_payload& p = *port.ready.front();
        port.ready.pop_front();
        tlm::tlm_phase phase = tlm::BEGIN_REQ;
        sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
        tlm::tlm_sync_enum s = dest_socket(dest)->nb_transport_fw(p, phase, delay);
        if (s == tlm::TLM_ACCEPTED) {
            port.controller_busy = true;  // its queue is full: END_REQ comes later
            return;
        }
        credit_returned(dest);
        if (s == tlm::TLM_COMPLETED)  // refused (address or burst error): answer the tile now
            deliver_response(p, tlm::BEGIN_RESP);
    }
}

void Noc::credit_returned(uint32_t dest) {
    Port& port = ports_[dest];
    ++port.credits;
    port.occupancy.level(cfg_.port_buffer - port.credits, cfg_.port_buffer, now_ns());
    if (port.waiting.empty())
        return;
    Waiting w = port.waiting.front();
    port.waiting.pop_front();
    --port.credits;
    double now = now_ns();
    port.occupancy.level(cfg_.port_buffer - port.credits, cfg_.port_buffer, now);
    port.wait_ns->add(now - w.since_ns);
    double accepted = inject(*w.p, *w.x, now);
    tlm::tlm_phase phase = tlm::END_REQ;
    sc_core::sc_time delay = until(accepted);
    tile_sockets[w.tile]->nb_transport_bw(*w.p, phase, delay);
}

tlm::tlm_sync_enum Noc::bw_from_stack(int stack, tlm::tlm_generic_payload& p, tlm::tlm_phase& phase,
                                      sc_core::sc_time&) {
    return bw_from_dest(uint32_t(stack), p, phase);
}

tlm::tlm_sync_enum Noc::bw_from_link(int channel, tlm::tlm_generic_payload& p, tlm::tlm_phase& phase,
                                     sc_core::sc_time&) {
    return bw_from_dest(stacks_ + uint32_t(channel), p, phase);
}

tlm::tlm_sync_enum Noc::bw_from_dest(uint32_t dest, tlm::tlm_generic_payload& p, tlm::tlm_phase& phase) {
    if (phase == tlm::END_REQ) {
        ports_[dest].controller_busy = false;
        credit_returned(dest);
        send_to_dest(dest);
        return tlm::TLM_ACCEPTED;
    }
    if (phase != tlm::BEGIN_RESP)
        return tlm::TLM_ACCEPTED;
    TransferExt& x = ext<TransferExt>(p);
    double bytes = p.is_read() ? double(p.get_data_length()) : double(cfg_.request_bytes);
    traverse(topology_.response_route(topology_dest(dest), topology_initiator(x.src_tile)), p, x, bytes, true);
    resp_peq_.notify_at(p, tlm::BEGIN_RESP, x.tail_ns);
    phase = tlm::END_RESP;
    return tlm::TLM_UPDATED;
}

void Noc::deliver_response(tlm::tlm_generic_payload& p, const tlm::tlm_phase&) {
    TransferExt* x = p.get_extension<TransferExt>();
    uint32_t tile = x->src_tile;
    release_routing_ext(p, x);
    if (tile < tiles_)
        release_route_ext(p);
    tile_responses_[tile].pending.push_back(&p);
    send_to_tile(tile);
}

void Noc::send_to_tile(uint32_t tile) {
    TileResponses& r = tile_responses_[tile];
    while (!r.busy && !r.pending.empty()) {
        tlm::tlm_generic_payload& p = *r.pending.front();
        r.pending.pop_front();
        tlm::tlm_phase phase = tlm::BEGIN_RESP;
        sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
        if (tile_sockets[int(tile)]->nb_transport_bw(p, phase, delay) == tlm::TLM_ACCEPTED)
            r.busy = true;  // END_RESP comes on the forward path
    }
}

void Noc::end_of_simulation() {
    double elapsed = now_ns();
    for (Port& port : ports_) {  // lt: the occupancy changes up to the end (as AT has seen them)
        port.lt_present.advance(elapsed);
        port.lt_held.advance(elapsed);
    }
    for (size_t l = 0; l < links_.size(); ++l) {
        std::string base = std::string(name()) + "." + topology_.link_name(l);
        stats().counter(base + ".bytes", "B").value = links_[l].pipe.bytes();
        stats().counter(base + ".utilization", "").value = elapsed > 0 ? links_[l].pipe.busy_ns() / elapsed : 0;
    }
}

} // namespace nctlm
