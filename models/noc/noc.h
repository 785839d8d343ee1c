// The network-on-chip: routes each burst by the address map to the HBM controller that owns it,
// over one-directional links that each add a hop latency and serialize bytes at their bandwidth
// (cut-through: data streams through, so a link limits throughput, not the latency of one burst).
// Tiles bind to `tile_sockets` in tile order, stacks to `stack_sockets` in stack order.
//
// Multi-chip platforms (docs/models/link.md): an address on another chip (AddressMap's chip field)
// is routed to a NeuronLink port: the NoC attaches the request's whole chip route (LinkRouteExt)
// and hands it to `link_sockets[port x V + vc]` for its first hop's port and virtual channel. A
// request arriving from another chip enters through `tile_sockets[tiles + port x V + vc]` (the
// link's delivery, one socket per virtual channel) and goes to a stack, or on to the next link
// port when this chip is only on its way. Each (port, vc) is a destination with its own credits,
// exactly like a stack port, so back-pressure from a full link reaches the tile that sent.
//
// Flow control (credits per stack port): a request takes one of the port's `port_buffer`
// credits when a tile hands it over (END_REQ) and returns it when the controller accepts it.
// With no credit free the tile's request waits unaccepted, so its DMA cannot issue more; the
// NoC sends the controller one request at a time and waits for its END_REQ. Responses are never
// refused (every initiator sinks its responses), so the request path cannot deadlock on them.
#pragma once

#include "models/common/bandwidth_pipe.h"
#include "models/common/level_sweep.h"
#include "models/common/peq.h"
#include "models/common/slot_times.h"
#include "models/common/stats.h"
#include "models/common/transfer.h"
#include "models/hbm/address_map.h"
#include "models/link/chip_topology.h"
#include "models/link/link_route_ext.h"
#include "models/noc/noc_config.h"
#include "models/noc/topology.h"

#include <deque>
#include <memory>
#include <optional>
#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_initiator_socket.h>
#include <tlm_utils/multi_passthrough_target_socket.h>
#include <vector>

namespace nctlm {

class Noc : public sc_core::sc_module {
public:
    tlm_utils::multi_passthrough_target_socket<Noc> tile_sockets;
    tlm_utils::multi_passthrough_initiator_socket<Noc> stack_sockets;
    tlm_utils::multi_passthrough_initiator_socket<Noc, 32, tlm::tlm_base_protocol_types, 0,
                                                  sc_core::SC_ZERO_OR_MORE_BOUND>
        link_sockets;

    // Keeps its own copies of the address map and the chip topology. `chips`: the platform's
    // NeuronLink wiring and this NoC's chip (none on a one-chip platform: no link ports).
    Noc(sc_core::sc_module_name name, const NocConfig& cfg, const AddressMap& map, uint32_t tiles,
        const ChipTopology* chips = nullptr, uint32_t chip = 0);
    const Topology& topology() const { return topology_; }
    uint32_t chip() const { return chip_; }
    static constexpr uint32_t kVirtualChannels = ChipTopology::kVirtualChannels;
    // Loosely-timed mode (sim.timing: lt, noc_lt.cpp): registers b_transport on the tile sockets.
    // Call during elaboration. A request takes a port credit (free again when the controller
    // accepts it), books the same links as under AT, and the controller's b_transport answers it.
    void enable_loosely_timed();

private:
    struct Link {
        LinkSchedule pipe;
        int track;
    };
    struct Waiting {
        int tile;
        tlm::tlm_generic_payload* p;
        TransferExt* x;
        double since_ns;
    };
    struct Port {  // toward one destination: a stack, or a link port's virtual channel
        uint32_t credits;
        std::deque<Waiting> waiting;                   // tiles' requests not yet accepted
        std::deque<tlm::tlm_generic_payload*> ready;   // arrived, to hand to the controller in order
        bool controller_busy = false;                  // a BEGIN_REQ awaits its END_REQ
        QueueStats occupancy;
        Histogram* wait_ns;                            // a tile's wait for a credit
        SlotTimes lt_credits;                // lt: when each credit is free again
        LevelSweep lt_present, lt_held;      // lt: requests at the port (waiting or holding a credit), credits held
    };
    struct TileResponses {  // BEGIN_RESP exclusion toward an initiator (a tile or a link's delivery)
        std::deque<tlm::tlm_generic_payload*> pending;
        bool busy = false;
    };
    tlm::tlm_sync_enum fw_from_tile(int tile, tlm::tlm_generic_payload& p, tlm::tlm_phase& phase,
                                    sc_core::sc_time& delay);
    tlm::tlm_sync_enum bw_from_stack(int stack, tlm::tlm_generic_payload& p, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay);
    tlm::tlm_sync_enum bw_from_link(int channel, tlm::tlm_generic_payload& p, tlm::tlm_phase& phase,
                                    sc_core::sc_time& delay);
    tlm::tlm_sync_enum bw_from_dest(uint32_t dest, tlm::tlm_generic_payload& p, tlm::tlm_phase& phase);
    // Where a request goes: a stack of this chip, or (port, vc) of its route's next hop; attaches
    // the route when the request leaves its own chip. Empty: not an address of the platform.
    std::optional<uint32_t> destination(tlm::tlm_generic_payload& p);
    uint32_t topology_initiator(uint32_t initiator) const {
        return initiator < tiles_ ? initiator : tiles_ + (initiator - tiles_) / kVirtualChannels;
    }
    uint32_t topology_dest(uint32_t dest) const {
        return dest < stacks_ ? dest : stacks_ + (dest - stacks_) / kVirtualChannels;
    }
    tlm::tlm_fw_transport_if<>* dest_socket(uint32_t dest) {
        return dest < stacks_ ? stack_sockets[int(dest)] : link_sockets[int(dest - stacks_)];
    }
    void release_route_ext(tlm::tlm_generic_payload& p);  // the response is home: the route goes back to the pool
    // Books the request route from `ready_ns`; returns when the first link has taken it.
    // The routing extension: the initiator's, or one the NoC attaches to a plain payload (and
    // release_routing_ext removes before the payload leaves).
    TransferExt* routing_ext(tlm::tlm_generic_payload& p, double now_ns);
    void release_routing_ext(tlm::tlm_generic_payload& p, TransferExt* x);
    // Books the request route from `ready_ns` (a read's header, a write's data); returns when the
    // first link is done with it (END_REQ).
    double book_request(tlm::tlm_generic_payload& p, TransferExt& x, double ready_ns);
    double inject(tlm::tlm_generic_payload& p, TransferExt& x, double ready_ns);  // book_request + arrival event
    // Moves data (head/tail in the payload's TransferExt) across a route; returns the first
    // link's occupancy end (when the sender is free again). `response`: the way back (trace names).
    double traverse(const std::vector<uint32_t>& route, tlm::tlm_generic_payload& p, TransferExt& x, double bytes,
                    bool response);
    void deliver_request(tlm::tlm_generic_payload& p, const tlm::tlm_phase& phase);
    void send_to_dest(uint32_t dest);
    void credit_returned(uint32_t dest);
    void deliver_response(tlm::tlm_generic_payload& p, const tlm::tlm_phase& phase);
    void send_to_tile(uint32_t tile);
    void end_of_simulation() override;
    void b_transport_lt(int tile, tlm::tlm_generic_payload& p, sc_core::sc_time& delay);

    NocConfig cfg_;
    AddressMap map_;
    std::optional<ChipTopology> chips_;
    uint32_t chip_, tiles_, stacks_;
    Topology topology_;
    double hop_ns_;
    std::vector<Link> links_;
    std::vector<Port> ports_;
    std::vector<TileResponses> tile_responses_;
    std::vector<std::unique_ptr<TransferExt>> spare_exts_;  // for plain payloads
    std::vector<std::unique_ptr<LinkRouteExt>> spare_routes_;  // for requests leaving this chip
    Peq<Noc> req_peq_, resp_peq_;
    Counter &address_errors_, &bursts_;
};

} // namespace nctlm
