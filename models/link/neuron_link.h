// One NeuronLink cable between two chips' link ports (end a and end b), both directions, as a
// SystemC module. Requests from a's NoC enter `from_a` (one binding per virtual channel) and leave
// `to_b` into b's NoC (its tile sockets after the tiles, one per virtual channel); the other way
// through `from_b` and `to_a`. Responses come back along each request's path.
//
// Per direction and virtual channel the far chip has `link.credits` receive slots: a request takes
// one when the link accepts it (END_REQ, once the wire has taken it) and frees it when the far NoC
// accepts the request. With none free the near NoC's request waits unaccepted: a full link
// withholds END_REQ, so pressure travels back to the DMA that sent it. Requests reach the far NoC
// one at a time per virtual channel, in arrival order. Responses are never refused: each takes the
// opposite direction's wire at once (the same LinkTiming as that direction's requests).
//
// Timing (LinkTiming, shared with the loosely-timed path in neuron_link_lt.cpp): the wire
// serializes bytes at `link.bandwidth` and the far end sees them `link.latency` later.
#pragma once

#include "models/common/peq.h"
#include "models/common/level_sweep.h"
#include "models/common/stats.h"
#include "models/link/link_config.h"
#include "models/link/link_route_ext.h"
#include "models/link/link_timing.h"

#include <array>
#include <deque>
#include <functional>
#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_initiator_socket.h>
#include <tlm_utils/multi_passthrough_target_socket.h>
#include <vector>

namespace nctlm {

class NeuronLink : public sc_core::sc_module {
public:
    tlm_utils::multi_passthrough_target_socket<NeuronLink> from_a, from_b;
    tlm_utils::multi_passthrough_initiator_socket<NeuronLink> to_a, to_b;

    NeuronLink(sc_core::sc_module_name name, const LinkConfig& cfg, uint32_t virtual_channels);
    // Loosely-timed mode (sim.timing: lt): registers b_transport on from_a/from_b. Call during
    // elaboration.
    void enable_loosely_timed();
    // Direction 0: a to b; 1: b to a.
    const LinkTiming& timing(int direction) const { return dirs_[size_t(direction)].timing; }
    // sim.timing: flow: the bytes the flow model moved over a direction (its counters read it at the
    // end; busy time is those bytes at link.bandwidth).
    void count_flow_bytes(int direction, std::function<double()> bytes) { dirs_[size_t(direction)].flow_bytes = std::move(bytes); }

private:
    struct Waiting {
        tlm::tlm_generic_payload* p;
        double since_ns;
    };
    struct Channel {  // one direction, one virtual channel
        uint32_t credits = 0;
        std::deque<Waiting> waiting;                    // not accepted yet: no receive slot free
        std::deque<tlm::tlm_generic_payload*> ready;    // at the far end, for the far NoC in order
        bool far_busy = false;                          // a BEGIN_REQ to the far NoC awaits END_REQ
        std::deque<tlm::tlm_generic_payload*> answers;  // responses back at the near end
        bool near_busy = false;                         // a BEGIN_RESP to the near NoC awaits END_RESP
        QueueStats occupancy;
        Histogram* wait_ns = nullptr;
        LevelSweep lt_present, lt_held;  // lt: requests at the link (waiting or holding a slot), slots held
    };
    struct Direction {
        LinkTiming timing;
        std::vector<Channel> channels;
        int track = -1;
        std::string name;  // "a_to_b"
        std::function<double()> flow_bytes;
    };

    tlm::tlm_sync_enum fw(int dir, int vc, tlm::tlm_generic_payload& p, tlm::tlm_phase& phase, sc_core::sc_time& delay);
    tlm::tlm_sync_enum bw(int dir, int vc, tlm::tlm_generic_payload& p, tlm::tlm_phase& phase);
    tlm::tlm_sync_enum fw_a(int vc, tlm::tlm_generic_payload& p, tlm::tlm_phase& ph, sc_core::sc_time& d) { return fw(0, vc, p, ph, d); }
    tlm::tlm_sync_enum fw_b(int vc, tlm::tlm_generic_payload& p, tlm::tlm_phase& ph, sc_core::sc_time& d) { return fw(1, vc, p, ph, d); }
    tlm::tlm_sync_enum bw_b(int vc, tlm::tlm_generic_payload& p, tlm::tlm_phase& ph, sc_core::sc_time&) { return bw(0, vc, p, ph); }
    tlm::tlm_sync_enum bw_a(int vc, tlm::tlm_generic_payload& p, tlm::tlm_phase& ph, sc_core::sc_time&) { return bw(1, vc, p, ph); }
    tlm::tlm_fw_transport_if<>* far(int dir, int vc) { return dir == 0 ? to_b[vc] : to_a[vc]; }
    tlm::tlm_bw_transport_if<>* near(int dir, int vc) { return dir == 0 ? from_a[vc] : from_b[vc]; }

    // Puts an accepted request on the wire from `ready_ns`; returns when the wire has taken it.
    double send_over(int dir, uint32_t vc, tlm::tlm_generic_payload& p, double ready_ns);
    void arrive(int dir, tlm::tlm_generic_payload& p);
    void arrive_ab(tlm::tlm_generic_payload& p, const tlm::tlm_phase&) { arrive(0, p); }
    void arrive_ba(tlm::tlm_generic_payload& p, const tlm::tlm_phase&) { arrive(1, p); }
    void send_far(int dir, uint32_t vc);
    void slot_freed(int dir, uint32_t vc);
    // A response to request direction `dir` takes the opposite wire; returns when it is at the near end.
    double carry_back(int dir, tlm::tlm_generic_payload& p, double ready_ns);
    void back(int dir, tlm::tlm_generic_payload& p);
    void back_ab(tlm::tlm_generic_payload& p, const tlm::tlm_phase&) { back(0, p); }
    void back_ba(tlm::tlm_generic_payload& p, const tlm::tlm_phase&) { back(1, p); }
    void send_near(int dir, uint32_t vc);
    void b_transport_lt(int dir, int vc, tlm::tlm_generic_payload& p, sc_core::sc_time& delay);
    void lt_a(int vc, tlm::tlm_generic_payload& p, sc_core::sc_time& delay) { b_transport_lt(0, vc, p, delay); }
    void lt_b(int vc, tlm::tlm_generic_payload& p, sc_core::sc_time& delay) { b_transport_lt(1, vc, p, delay); }
    void end_of_simulation() override;

    LinkConfig cfg_;
    std::array<Direction, 2> dirs_;
    Peq<NeuronLink> arrive_ab_, arrive_ba_, back_ab_, back_ba_;
    Peq<NeuronLink>& arrive_peq(int dir) { return dir == 0 ? arrive_ab_ : arrive_ba_; }
    Peq<NeuronLink>& back_peq(int dir) { return dir == 0 ? back_ab_ : back_ba_; }
};

} // namespace nctlm
