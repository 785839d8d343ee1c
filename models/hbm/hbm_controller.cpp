#include "models/hbm/hbm_controller.h"

#include "models/common/burst_trace.h"
#include "models/common/sim.h"
#include "models/common/trace.h"
#include "models/common/transfer.h"

#include <fmt/format.h>

namespace nctlm {

HbmController::HbmController(sc_core::sc_module_name name, const HbmConfig& cfg, const AddressMap& map,
                             uint32_t stack, uint32_t chip)
    : sc_module(name), socket("socket"), cfg_(cfg), map_(map), bank_map_(cfg), timing_(DramTiming::from(cfg)),
      stack_(stack), chip_(chip), pcs_(cfg.pseudo_channels), resp_peq_(this, &HbmController::queue_response),
      bytes_read_(stats().counter(std::string(this->name()) + ".bytes_read", "B")),
      bytes_written_(stats().counter(std::string(this->name()) + ".bytes_written", "B")),
      bursts_(stats().counter(std::string(this->name()) + ".bursts", "")),
      refused_(stats().counter(std::string(this->name()) + ".refused", "")),
      read_latency_(&stats().histogram(std::string(this->name()) + ".read_latency_ns", "ns")) {
    socket.register_nb_transport_fw(this, &HbmController::nb_transport_fw);
    if (cfg.model == HbmModel::Banked)
        ingress_track_.open(this->name(), "ingress queue");
    for (uint32_t i = 0; i < cfg.pseudo_channels; ++i) {
        Pc& pc = pcs_[i];
        std::string base = fmt::format("{}.pc{}", this->name(), i);
        pc.track = nctlm::trace().enabled() ? nctlm::trace().track(this->name(), fmt::format("pc{}", i)) : -1;
        if (cfg.model == HbmModel::Pipe) {
            pc.pipe = BandwidthPipe(cfg.pc_bandwidth);
            pc.wait_ns = &stats().histogram(base + ".wait_ns", "ns");
            continue;
        }
        pc.sched = std::make_unique<PcScheduler>(cfg, timing_);
        pc.reads.register_as(base + ".read_queue");
        pc.writes.register_as(base + ".write_queue");
        pc.reads.track.open(this->name(), fmt::format("pc{} read queue", i));
        pc.writes.track.open(this->name(), fmt::format("pc{} write queue", i));
        sc_core::sc_spawn_options opts;
        opts.spawn_method();
        opts.set_sensitivity(&pc.wake);
        opts.dont_initialize();
        sc_core::sc_spawn([this, i] { decide(i); }, fmt::format("pc{}_scheduler", i).c_str(), &opts);
    }
}

void HbmController::preload(uint64_t stack_offset, const unsigned char* data, uint64_t length) {
    memory_.write(stack_offset, data, length);
}

void HbmController::measure_between(double from_ns, double to_ns) {
    measure_from_ = from_ns;
    measure_to_ = to_ns;
}

tlm::tlm_sync_enum HbmController::nb_transport_fw(tlm::tlm_generic_payload& p, tlm::tlm_phase& phase,
                                                  sc_core::sc_time& delay) {
    if (phase == tlm::END_RESP) {
        response_busy_ = false;
        send_responses();
        return tlm::TLM_COMPLETED;
    }
    if (phase != tlm::BEGIN_REQ)
        return tlm::TLM_ACCEPTED;
    auto loc = map_.map(p.get_address());
    if (!loc || loc->stack != stack_ || loc->chip != chip_) {
        refused_.add(1);
        p.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        return tlm::TLM_COMPLETED;
    }
    if (cfg_.model == HbmModel::Pipe) {
        phase = tlm::END_REQ;  // the pipe's queue accepts at once
        return begin_pipe(p, *loc, now_ns() + ns(delay));
    }
    if (loc->offset % cfg_.interleave + p.get_data_length() > cfg_.interleave || p.get_data_length() == 0) {
        refused_.add(1);  // one request, one pseudo-channel: a longer one must be cut by its initiator
        p.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
        return tlm::TLM_COMPLETED;
    }
    if (blocked_)
        SC_REPORT_ERROR("/nctlm/hbm/protocol", (std::string(name()) + ": BEGIN_REQ before the previous request's "
                                                                      "END_REQ (request exclusion, IEEE 1666 15.2.6)")
                                                   .c_str());
    if (!try_accept(p, *loc)) {
        blocked_ = &p;  // END_REQ once the scheduler frees room
        blocked_loc_ = *loc;
        return tlm::TLM_ACCEPTED;
    }
    phase = tlm::END_REQ;
    return tlm::TLM_UPDATED;
}

bool HbmController::try_accept(tlm::tlm_generic_payload& p, const HbmLocation& loc) {
    Pc& pc = pcs_[loc.pseudo_channel];
    double now = now_ns();
    if (pc.ingress.empty() && pc.sched->has_room(p.is_write(), accesses(p, loc))) {
        admit(p, loc, now);
        return true;
    }
    if (ingress_used_ >= cfg_.ingress_queue)
        return false;
    ++ingress_used_;
    ingress_track_.sample(now, double(ingress_used_));
    pc.ingress.push_back({&p, loc, now});
    return true;
}

void HbmController::refill(uint32_t i) {
    Pc& pc = pcs_[i];
    while (!pc.ingress.empty() &&
           pc.sched->has_room(pc.ingress.front().p->is_write(), accesses(*pc.ingress.front().p, pc.ingress.front().loc))) {
        Waiting w = pc.ingress.front();
        pc.ingress.pop_front();
        --ingress_used_;
        ingress_track_.sample(now_ns(), double(ingress_used_));
        admit(*w.p, w.loc, w.accepted_ns);
    }
    if (blocked_ && try_accept(*blocked_, blocked_loc_)) {
        tlm::tlm_generic_payload& p = *blocked_;
        blocked_ = nullptr;
        tlm::tlm_phase phase = tlm::END_REQ;
        sc_core::sc_time zero = sc_core::SC_ZERO_TIME;
        socket->nb_transport_bw(p, phase, zero);
    }
}

void HbmController::trace_pc(const tlm::tlm_generic_payload& p, uint32_t pseudo_channel, double start, double end) {
    SpanArgs a = burst_span_args(p, p.get_data_length());  // the burst's flow (both modes)
    a.pc = int32_t(pseudo_channel);
    nctlm::trace().span(pcs_[pseudo_channel].track, p.is_write() ? "write" : "read", start, end, a);
}

tlm::tlm_sync_enum HbmController::begin_pipe(tlm::tlm_generic_payload& p, const HbmLocation& loc, double arrival) {
    Pc& pc = pcs_[loc.pseudo_channel];
    Occupancy occ = pc.pipe.reserve(arrival + cfg_.controller_latency.ns, p.get_data_length());
    pc.wait_ns->add(occ.start_ns - arrival - cfg_.controller_latency.ns);
    bursts_.add(1);
    bool write = p.is_write();
    (write ? bytes_written_ : bytes_read_).add(p.get_data_length());
    if (pc.track >= 0)
        trace_pc(p, loc.pseudo_channel, occ.start_ns, occ.end_ns);
    if (cfg_.functional && carries_data(p)) {
        if (write)
            memory_.write(loc.offset, p.get_data_ptr(), p.get_data_length());
        else
            memory_.read(loc.offset, p.get_data_ptr(), p.get_data_length());
    }
    p.set_response_status(tlm::TLM_OK_RESPONSE);
    if (auto* x = p.get_extension<TransferExt>())
        x->pseudo_channel = loc.pseudo_channel;
    count(write, p.get_data_length(), arrival, occ.end_ns);
    // A read's data streams out of the PC during [start, end]; a write is acknowledged when done.
    respond(p, write ? occ.end_ns : occ.start_ns, occ.end_ns);
    return tlm::TLM_UPDATED;
}

uint32_t HbmController::accesses(const tlm::tlm_generic_payload& p, const HbmLocation& loc) const {
    const uint32_t shift = bank_map_.access_shift();  // the banked model's access_bytes is a power of two
    const uint64_t first = loc.offset >> shift, last = (loc.offset + p.get_data_length() - 1) >> shift;
    return uint32_t(last - first + 1);
}

void HbmController::admit(tlm::tlm_generic_payload& p, const HbmLocation& loc, double accepted_ns) {
    Pc& pc = pcs_[loc.pseudo_channel];
    const bool write = p.is_write();
    const double now = now_ns();
    const uint32_t r_accesses = accesses(p, loc);
    uint64_t tag;
    if (free_slots_.empty()) {
        tag = slots_.size();
        slots_.emplace_back();
    } else {
        tag = free_slots_.back();
        free_slots_.pop_back();
    }
    // A write larger than the whole buffer is inside it only once its overflow has drained.
    uint32_t overflow = write && r_accesses > cfg_.write_queue ? r_accesses - cfg_.write_queue : 0;
    slots_[tag] = {write && !overflow ? nullptr : &p, accepted_ns, loc.offset};
    if (pc.track >= 0) {  // a posted write's payload is gone by the time its data moves
        slot_args_.resize(slots_.size());
        slot_args_[tag] = burst_span_args(p, p.get_data_length());
        slot_args_[tag].pc = int32_t(loc.pseudo_channel);
    }
    DramRequest r;
    r.tag = tag;
    r.write = write;
    r.bytes = p.get_data_length();
    r.ready_ns = now + timing_.front_end;
    pc.sched->describe(r, bank_map_, loc.offset);
    r.mark = overflow;
    QueueStats& q = write ? pc.writes : pc.reads;
    q.sample(pc.sched->queued(write));
    pc.sched->enqueue(std::move(r));
    q.level(pc.sched->queued(write), write ? cfg_.write_queue : cfg_.read_queue, now);
    bursts_.add(1);
    (write ? bytes_written_ : bytes_read_).add(p.get_data_length());
    if (auto* x = p.get_extension<TransferExt>())
        x->pseudo_channel = loc.pseudo_channel;
    if (write && cfg_.functional && carries_data(p))  // later reads see it: they queue behind
        memory_.write(loc.offset, p.get_data_ptr(), p.get_data_length());
    if (write && !overflow) {  // posted: the data is in the controller's write buffer
        p.set_response_status(tlm::TLM_OK_RESPONSE);
        respond(p, now, now);
    }
    wake_later(loc.pseudo_channel);
}

void HbmController::wake_later(uint32_t i) {
    Pc& pc = pcs_[i];
    if (pc.decision_pending)
        return;
    pc.decision_pending = true;
    notify_at(pc.wake, pc.sched->next_decision_ns(now_ns()));
}

// pc.wake.notify(until(t_ns)) without building sc_time values for a decision due now.
void HbmController::notify_at(sc_core::sc_event& e, double t_ns) {
    const sc_dt::uint64 t = at_ticks(t_ns), now = sim_time().value();
    if (t <= now)
        e.notify(sc_core::SC_ZERO_TIME);
    else
        e.notify(sc_core::sc_time::from_value(t - now));
}

void HbmController::decide(uint32_t i) {
    Pc& pc = pcs_[i];
    pc.decision_pending = true;  // admissions below must not post a second wake-up
    const double now = now_ns();
    while (!pc.sched->empty()) {
        const double next = pc.sched->next_decision_ns(now);
        if (at_ticks(next) > sim_time().value()) {  // until(next) > 0
            notify_at(pc.wake, next);
            return;
        }
        Scheduled s = pc.sched->schedule_next(now);
        (s.write ? pc.writes : pc.reads)
            .level(pc.sched->queued(s.write), s.write ? cfg_.write_queue : cfg_.read_queue, now);
        Slot slot = slots_[s.tag];
        free_slots_.push_back(s.tag);
        // The PC's span before the response it starts: its hops begin when it does, and the
        // trace keeps the order spans were emitted in for ties.
        if (pc.track >= 0)
            nctlm::trace().span(pc.track, s.write ? "write" : "read", s.first_data_ns, s.last_data_ns,
                                slot_args_[s.tag]);
        if (s.write && slot.p) {  // acknowledged once its overflow is out of the buffer
            slot.p->set_response_status(tlm::TLM_OK_RESPONSE);
            respond(*slot.p, s.mark_ns, s.mark_ns);
        } else if (!s.write) {
            tlm::tlm_generic_payload& p = *slot.p;
            if (cfg_.functional && carries_data(p))
                memory_.read(slot.offset, p.get_data_ptr(), p.get_data_length());
            p.set_response_status(tlm::TLM_OK_RESPONSE);
            respond(p, s.first_data_ns, s.last_data_ns);
        }
        count(s.write, s.bytes, slot.accepted_ns, s.last_data_ns);
        refill(i);
    }
    pc.decision_pending = false;
}

void HbmController::respond(tlm::tlm_generic_payload& p, double head_ns, double tail_ns) {
    if (auto* x = p.get_extension<TransferExt>()) {
        x->stack = stack_;
        x->head_ns = head_ns;
        x->tail_ns = tail_ns;
        resp_peq_.notify_at(p, tlm::BEGIN_RESP, head_ns);
    } else {  // a plain payload: answered when its last byte is out
        resp_peq_.notify_at(p, tlm::BEGIN_RESP, tail_ns);
    }
}

void HbmController::queue_response(tlm::tlm_generic_payload& p, const tlm::tlm_phase&) {
    responses_.push_back(&p);
    send_responses();
}

void HbmController::send_responses() {
    while (!response_busy_ && !responses_.empty()) {
        tlm::tlm_generic_payload* p = responses_.front();
        responses_.pop_front();
        tlm::tlm_phase phase = tlm::BEGIN_RESP;
        sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
        if (socket->nb_transport_bw(*p, phase, delay) == tlm::TLM_ACCEPTED)
            response_busy_ = true;  // END_RESP will come on the forward path
    }
}

void HbmController::count(bool write, uint64_t bytes, double accepted_ns, double last_ns) {
    if (last_ns < measure_from_ || last_ns > measure_to_)
        return;
    (write ? measured_write_bytes_ : measured_read_bytes_) += double(bytes);
    ++measured_requests_;
    if (!write)
        read_latency_->add(last_ns - accepted_ns);
}

void HbmController::record_flow(bool write, uint64_t bytes, uint64_t requests, double accepted_ns, double last_ns) {
    bursts_.add(double(requests));
    (write ? bytes_written_ : bytes_read_).add(double(bytes));
    if (last_ns < measure_from_ || last_ns > measure_to_)
        return;
    (write ? measured_write_bytes_ : measured_read_bytes_) += double(bytes);
    measured_requests_ += requests;
    if (!write)
        read_latency_->add(last_ns - accepted_ns);
}

void HbmController::access_flow(uint64_t stack_offset, unsigned char* data, uint64_t length, bool write) {
    if (!cfg_.functional || !data)
        return;
    if (write)
        memory_.write(stack_offset, data, length);
    else
        memory_.read(stack_offset, data, length);
}

PcCounters HbmController::bank_counters() const {
    PcCounters sum;
    for (const Pc& pc : pcs_) {
        if (!pc.sched)
            continue;
        const PcCounters& c = pc.sched->counters();
        sum.row_hits += c.row_hits;
        sum.row_misses += c.row_misses;
        sum.row_conflicts += c.row_conflicts;
        sum.activates += c.activates;
        sum.refreshes += c.refreshes;
        sum.reads += c.reads;
        sum.writes += c.writes;
        sum.turnarounds += c.turnarounds;
        sum.data_busy_ns += c.data_busy_ns;
    }
    return sum;
}

void HbmController::end_of_simulation() {
    const double elapsed = now_ns();
    for (Pc& pc : pcs_) {  // lt: the queue changes up to the end (as AT has seen them)
        pc.lt_reads.advance(elapsed);
        pc.lt_writes.advance(elapsed);
    }
    lt_ingress_.advance(elapsed);
    double busy = 0;
    for (size_t i = 0; i < pcs_.size(); ++i) {
        double b = pcs_[i].sched ? pcs_[i].sched->counters().data_busy_ns : pcs_[i].pipe.busy_ns();
        busy += b;
        stats().counter(fmt::format("{}.pc{}.busy_ns", name(), i), "ns").value = b;
    }
    std::string base(name());
    stats().counter(base + ".utilization", "").value = elapsed > 0 ? busy / (elapsed * double(pcs_.size())) : 0;
    if (cfg_.model == HbmModel::Banked) {
        PcCounters c = bank_counters();
        uint64_t accesses = c.reads + c.writes;
        stats().counter(base + ".activates", "").value = double(c.activates);
        stats().counter(base + ".refreshes", "").value = double(c.refreshes);
        stats().counter(base + ".turnarounds", "").value = double(c.turnarounds);
        stats().counter(base + ".row_conflicts", "").value = double(c.row_conflicts);
        stats().counter(base + ".row_hit_rate", "").value =
            accesses ? 1.0 - double(c.activates) / double(accesses) : 0;
    }
}

} // namespace nctlm
