// HbmController's loosely-timed path (sim.timing: lt). A request reaches its pseudo-channel's
// model at its arrival time (kernel time + the b_transport delay) and is placed at once: the
// banked model's PcScheduler (the same object the AT path drives) decides it at
// next_decision_ns, as the AT scheduler process would with nothing else queued, and returns its
// data times; the pipe model books its BandwidthPipe. So a PC's bank, bus and refresh state is one
// model whichever mode feeds it. What LT does not have is a queue to reorder: requests are served
// in the order they arrive here (FR-FCFS degenerates to FCFS), and an initiator up to a quantum
// ahead is served before one behind it.
//
// Finite queues become timing. A request enters its PC queue once enough of the requests ahead of
// it there have left it (their decision times) for its column accesses to fit, as AT's has_room()
// (queue_leave_times.h). Until then it needs a slot of the stack's ingress buffer (hbm.ingress_queue slots,
// each free again at a time); with none free it is not accepted until one is. Acceptance is
// TransferExt::accept_ns, what END_REQ carries under AT. Posted writes are acknowledged once
// accepted, as under AT. Not modelled: the AT port's head-of-line blocking (a request waiting for
// a slot does not hold back requests for other PCs), see docs/performance.md.
#include "models/common/sim.h"
#include "models/common/trace.h"
#include "models/common/transfer.h"
#include "models/hbm/hbm_controller.h"

#include <algorithm>

namespace nctlm {

void HbmController::enable_loosely_timed() {
    lt_ingress_free_.assign(cfg_.ingress_queue, 0);
    // Each PC's recent queue-leave times; its queue statistics from the booked intervals, replayed
    // in time order (level_sweep.h).
    for (Pc& pc : pcs_) {
        pc.lt_read_left.reset(cfg_.read_queue);
        pc.lt_write_left.reset(cfg_.write_queue);
        pc.lt_reads = LevelSweep([&pc, cap = cfg_.read_queue](size_t n, double t) { pc.reads.level(n, cap, t); });
        pc.lt_writes = LevelSweep([&pc, cap = cfg_.write_queue](size_t n, double t) { pc.writes.level(n, cap, t); });
    }
    lt_ingress_ = LevelSweep([this](size_t n, double t) { ingress_track_.sample(t, double(n)); });
    socket.register_b_transport(this, &HbmController::b_transport_lt);
}

void HbmController::b_transport_lt(tlm::tlm_generic_payload& p, sc_core::sc_time& delay) {
    const double arrival = now_ns() + ns(delay);
    auto loc = map_.map(p.get_address());
    if (!loc || loc->stack != stack_ || loc->chip != chip_) {
        refused_.add(1);
        p.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        return;
    }
    const bool write = p.is_write();
    const uint64_t length = p.get_data_length();
    Pc& pc = pcs_[loc->pseudo_channel];
    double accepted = arrival, head, tail;
    if (cfg_.model == HbmModel::Pipe) {
        Occupancy occ = pc.pipe.reserve(arrival + cfg_.controller_latency.ns, double(length));
        pc.wait_ns->add(occ.start_ns - arrival - cfg_.controller_latency.ns);
        head = write ? occ.end_ns : occ.start_ns;
        tail = occ.end_ns;
        count(write, length, arrival, occ.end_ns);
        if (pc.track >= 0)
            trace_pc(p, loc->pseudo_channel, occ.start_ns, occ.end_ns);
    } else {
        if (loc->offset % cfg_.interleave + length > cfg_.interleave || length == 0) {
            refused_.add(1);  // one request, one pseudo-channel (as under AT)
            p.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
            return;
        }
        const uint32_t n = accesses(p, *loc);
        QueueLeaveTimes& left = write ? pc.lt_write_left : pc.lt_read_left;
        const double room = left.room(n);  // its PC queue has room for its entries
        double admitted = arrival;
        if (room > arrival && lt_ingress_free_.size() == 0) {  // no ingress buffer: held until its PC has room
            accepted = admitted = room;
        } else if (room > arrival) {  // its PC queue is full: a slot of the stack's ingress buffer, or wait for one
            accepted = std::max(arrival, lt_ingress_free_.earliest());
            admitted = std::max(accepted, room);
            lt_ingress_free_.book_earliest(admitted);
        }
        const uint32_t overflow = write && n > cfg_.write_queue ? n - cfg_.write_queue : 0;
        if (ingress_track_.id >= 0) {  // the ingress buffer has a trace counter only (as under AT)
            lt_ingress_.hold(accepted, admitted);  // waited in it (nothing if it did not)
            lt_ingress_.advance(accepted);
        }
        LevelSweep& queue = write ? pc.lt_writes : pc.lt_reads;
        (write ? pc.writes : pc.reads).sample(queue.advance(admitted));  // the entries it found, as under AT
        DramRequest& r = lt_request_;  // reused: its segment storage stays
        r.write = write;
        r.bytes = length;
        r.ready_ns = admitted + timing_.front_end;
        pc.sched->describe(r, bank_map_, loc->offset);
        r.mark = overflow;
        const double decision = pc.sched->next_decision_ns(admitted);
        Scheduled s = pc.sched->enqueue_and_schedule(r, decision);
        queue.hold(admitted, decision, n);  // its entries, until it is picked
        left.push(decision, n);
        if (write) {  // posted: acknowledged once in its PC's write queue (after its overflow drained), as under AT
            head = tail = overflow ? s.mark_ns : admitted;
        } else {
            head = s.first_data_ns;
            tail = s.last_data_ns;
        }
        count(write, length, accepted, s.last_data_ns);
        if (pc.track >= 0)
            trace_pc(p, loc->pseudo_channel, s.first_data_ns, s.last_data_ns);
    }
    bursts_.add(1);
    (write ? bytes_written_ : bytes_read_).add(length);
    if (cfg_.functional && carries_data(p)) {  // not a timing-only burst's scratch bytes
        if (write)
            memory_.write(loc->offset, p.get_data_ptr(), length);
        else
            memory_.read(loc->offset, p.get_data_ptr(), length);
    }
    p.set_response_status(tlm::TLM_OK_RESPONSE);
    if (auto* x = p.get_extension<TransferExt>()) {  // BEGIN_RESP at the first data byte, as under AT
        x->stack = stack_;
        x->pseudo_channel = loc->pseudo_channel;
        x->head_ns = head;
        x->tail_ns = tail;
        x->accept_ns = accepted;
        delay = until(head);
    } else {  // a plain payload: answered when its last byte is out
        delay = until(tail);
    }
}

} // namespace nctlm
