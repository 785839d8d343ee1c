// The network-on-chip: routes each burst by the address map to the HBM controller that owns it,
// over one-directional links that each add a hop latency and serialize bytes at their bandwidth
// (cut-through: data streams through, so a link limits throughput, not the latency of one burst).
// Tiles bind to `tile_sockets` in tile order, stacks to `stack_sockets` in stack order.
#pragma once

#include "models/common/bandwidth_pipe.h"
#include "models/common/peq.h"
#include "models/common/stats.h"
#include "models/hbm/address_map.h"
#include "models/noc/noc_config.h"
#include "models/noc/topology.h"

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

    Noc(sc_core::sc_module_name name, const NocConfig& cfg, const AddressMap& map, uint32_t tiles);
    const Topology& topology() const { return topology_; }

private:
    struct Link {
        LinkSchedule pipe;
        int track;
    };
    tlm::tlm_sync_enum fw_from_tile(int tile, tlm::tlm_generic_payload& p, tlm::tlm_phase& phase,
                                    sc_core::sc_time& delay);
    tlm::tlm_sync_enum bw_from_stack(int stack, tlm::tlm_generic_payload& p, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay);
    // Moves data (head/tail in the payload's TransferExt) across a route; returns the first
    // link's occupancy end (when the sender is free again).
    double traverse(const std::vector<uint32_t>& route, tlm::tlm_generic_payload& p, double bytes);
    void deliver_request(tlm::tlm_generic_payload& p, const tlm::tlm_phase& phase);
    void deliver_response(tlm::tlm_generic_payload& p, const tlm::tlm_phase& phase);
    void end_of_simulation() override;

    NocConfig cfg_;
    const AddressMap& map_;
    Topology topology_;
    double hop_ns_;
    std::vector<Link> links_;
    Peq<Noc> req_peq_, resp_peq_;
    Counter &address_errors_, &bursts_;
};

} // namespace nctlm
