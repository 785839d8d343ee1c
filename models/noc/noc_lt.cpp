// The NoC's loosely-timed path (sim.timing: lt): one b_transport carries a request from a tile to
// its stack and the response back, on the same links (LinkSchedule) and hop latency as the AT
// path. Flow control becomes timing: a port's `port_buffer` credits are each free again at a
// time (when the controller accepted the request that held it); a request is injected once it
// holds one, and that injection's first link end is when the tile may send its next request
// (TransferExt::accept_ns, what END_REQ carries under AT).
#include "models/common/sim.h"
#include "models/noc/noc.h"

#include <algorithm>

namespace nctlm {

void Noc::enable_loosely_timed() {
    for (Port& port : ports_) {
        port.lt_credits.assign(cfg_.port_buffer, 0);
        // The AT statistics from the booked intervals, replayed in time order (level_sweep.h).
        port.lt_held = LevelSweep([&port, cap = cfg_.port_buffer](size_t n, double t) { port.occupancy.level(n, cap, t); });
    }
    tile_sockets.register_b_transport(this, &Noc::b_transport_lt);
}

// A request for another chip goes to its link port's virtual channel as to a stack: the link's
// b_transport carries it to the next chip's NoC and returns when the response is back at the port.

void Noc::b_transport_lt(int tile, tlm::tlm_generic_payload& p, sc_core::sc_time& delay) {
    const double kernel_now = now_ns(), t = kernel_now + ns(delay);
    auto dest = destination(p);
    if (!dest) {
        address_errors_.add(1);
        p.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        return;
    }
    bursts_.add(1);
    TransferExt* x = routing_ext(p, t);  // a plain payload's is removed before returning
    x->src_tile = uint32_t(tile);
    x->stack = *dest;
    Port& port = ports_[*dest];
    port.occupancy.sample(port.lt_present.advance(t));  // as under AT: credits held + requests waiting
    port.lt_held.advance(t);
    double inject = std::max(t, port.lt_credits.earliest());
    port.wait_ns->add(inject - t);
    // A write's data was booked from the DMA's streaming times; as under AT, a request that waited
    // for its credit is accepted (END_REQ) and reaches the stack no earlier than it was injected.
    double accepted = std::max(inject, book_request(p, *x, inject));
    double arrival = std::max(inject, x->tail_ns);
    x->accept_ns = 0;
    sc_core::sc_time to_stack = until(arrival);
    dest_socket(*dest)->b_transport(p, to_stack);
    // The controller accepted it (accept_ns; at once when it does not say): the credit is back.
    const double credit_back = std::max(arrival, x->accept_ns);
    port.lt_credits.book_earliest(credit_back);
    port.lt_present.hold(t, credit_back);
    port.lt_held.hold(inject, credit_back);
    double at_tile;
    if (p.get_response_status() == tlm::TLM_OK_RESPONSE) {
        double resp_bytes = p.is_read() ? double(p.get_data_length()) : double(cfg_.request_bytes);
        traverse(topology_.response_route(topology_dest(*dest), topology_initiator(x->src_tile)), p, *x, resp_bytes,
                 true);
        at_tile = x->tail_ns;
    } else {  // refused by the controller: answered where it stands, as the AT path does
        at_tile = credit_back;
    }
    x->accept_ns = accepted;
    release_routing_ext(p, x);
    if (uint32_t(tile) < tiles_)
        release_route_ext(p);
    delay = until(at_tile);
}

} // namespace nctlm
