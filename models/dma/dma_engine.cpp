#include "models/dma/dma_engine.h"

#include "models/common/errors.h"
#include "models/common/trace.h"

#include <algorithm>
#include <fmt/format.h>

namespace nctlm {

DmaEngine::DmaEngine(sc_core::sc_module_name name, const DmaConfig& cfg, uint32_t tile)
    : sc_module(name), socket("socket"), cfg_(cfg), rules_(DmaCostRules::from(cfg)),
      instruction_time_(Bandwidth{1e9}), tile_(tile), queues_(cfg.queues), queue_active_(cfg.queues, 0),
      channel_done_(cfg.channels), wake_(cfg.channels), granted_(cfg.channels), data_pipe_(cfg.data_bandwidth()), completions_("completions"),
      descriptor_time_(to_sc(cfg.clock.cycles(cfg.descriptor_cycles))),
      completion_ns_(cfg.clock.cycles(cfg.completion_cycles).ns),
      bytes_read_(stats().counter(std::string(this->name()) + ".bytes_read", "B")),
      bytes_written_(stats().counter(std::string(this->name()) + ".bytes_written", "B")),
      descriptors_(stats().counter(std::string(this->name()) + ".descriptors", "")),
      tracing_(nctlm::trace().enabled()) {
    scratch_.assign(cfg.burst_size, 0);
    socket.register_nb_transport_bw(this, &DmaEngine::nb_transport_bw);
    for (uint32_t q = 0; q < cfg.queues; ++q)
        queue_latency_.push_back(&stats().histogram(fmt::format("{}.queue{}.latency_ns", this->name(), q), "ns"));
    for (uint32_t c = 0; c < cfg.channels; ++c) {
        channel_tracks_.push_back(nctlm::trace().enabled() ? nctlm::trace().track(this->name(), fmt::format("channel{}", c)) : -1);
        sc_core::sc_spawn_options opts;
        sc_core::sc_spawn([this, c] { channel_thread(int(c)); }, fmt::format("channel{}", c).c_str(), &opts);
    }
    if (nctlm::trace().enabled())
        data_track_ = nctlm::trace().track(this->name(), "data");
    queue_counters_.assign(cfg.queues, -1);
    SC_METHOD(complete_ready);
    sensitive << completions_.get_event();
    dont_initialize();
}

Occupancy DmaEngine::book_instruction(const DmaTransferShape& shape, double ready_ns) {
    return instruction_time_.reserve(ready_ns, rules_.busiest_engine_ns(shape));
}

void DmaEngine::retire() {
    for (auto* p : retire_)
        p->release();
    retire_.clear();
}

void DmaEngine::post(DmaDescriptor& d) {
    if (d.queue >= cfg_.queues)
        throw std::invalid_argument(fmt::format("{}: queue {} does not exist ({} queues)", name(), d.queue, cfg_.queues));
    if (d.bytes == 0)
        throw std::invalid_argument(fmt::format("{}: empty descriptor", name()));
    d.id = next_id_++;
    d.t_post = now_ns();
    d.t_first_issue = d.t_last_accept = d.t_done = -1;
    d.failed = false;
    d.error.clear();
    d.last_data_ns = 0;
    d.holding_channel = -1;
    d.bursts_left = uint32_t((d.address % cfg_.burst_size + d.bytes + cfg_.burst_size - 1) / cfg_.burst_size);
    if (tracing_ && d.trace_flow == 0)  // a poster may link its own span first
        d.trace_flow = nctlm::trace().new_flow();
    queues_[d.queue].push_back(&d);
    ++queued_;
    sample_queue(d.queue);
    link_live(d);
    ++outstanding_;
    if (lt_) {  // the loosely-timed process takes every descriptor
        lt_may_start_ = true;
        lt_scheduler_->posted(*this);
        return;
    }
    if (flows_) {
        lt_may_start_ = true;
        flow_take(now_ns());
        return;
    }
    wake_idle();
}

void DmaEngine::wake_idle() {
    if (idle_.empty())
        return;
    int c = idle_.front();
    idle_.pop_front();
    wake_[size_t(c)].notify(sc_core::SC_ZERO_TIME);
}

void DmaEngine::link_live(DmaDescriptor& d) {
    d.live_prev = live_tail_;
    d.live_next = nullptr;
    (live_tail_ ? live_tail_->live_next : live_head_) = &d;
    live_tail_ = &d;
}

void DmaEngine::unlink_live(DmaDescriptor& d) {
    (d.live_prev ? d.live_prev->live_next : live_head_) = d.live_next;
    (d.live_next ? d.live_next->live_prev : live_tail_) = d.live_prev;
    d.live_prev = d.live_next = nullptr;
}

void DmaEngine::sample_queue(uint32_t q) {
    if (!tracing_)
        return;
    if (queue_counters_[q] < 0)
        queue_counters_[q] = nctlm::trace().counter(name(), fmt::format("queue{} waiting", q));
    nctlm::trace().sample(queue_counters_[q], now_ns(), double(queues_[q].size()));
}

DmaDescriptor* DmaEngine::take_next() {
    if (queued_ == 0)
        return nullptr;
    for (uint32_t i = 0; i < cfg_.queues; ++i) {
        uint32_t q = (rr_next_ + i) % cfg_.queues;
        if (!queues_[q].empty() && queue_active_[q] < cfg_.queue_channels) {
            DmaDescriptor* d = queues_[q].front();
            queues_[q].pop_front();
            --queued_;
            sample_queue(q);
            ++queue_active_[q];
            rr_next_ = (q + 1) % cfg_.queues;
            return d;
        }
    }
    return nullptr;
}

void DmaEngine::channel_thread(int channel) {
    if (lt_ || flows_)  // the loosely-timed process or the flow model takes every descriptor
        return;
    int freed_queue = -1;  // the queue whose channel limit this channel just released
    while (true) {
        DmaDescriptor* d = take_next();
        if (!d) {
            idle_.push_back(channel);
            sc_core::wait(wake_[size_t(channel)]);
            continue;
        }
        // Releasing a queue's channel slot may have made a descriptor eligible that this channel
        // did not take (it took another queue's by round robin): an idle channel takes it.
        if (freed_queue >= 0 && int(d->queue) != freed_queue && !queues_[size_t(freed_queue)].empty())
            wake_idle();
        freed_queue = -1;
        double t_take = now_ns();
        // Its turn on the request socket is taken now, in the order descriptors are taken (the
        // queues' round robin), and starts once the descriptor is read. The socket is this
        // channel's for all of the descriptor's bursts, handed over at the last one's END_REQ.
        acquire_request(channel, t_take + ns(descriptor_time_));
        // Cut on burst_size boundaries so every burst maps to one pseudo-channel.
        uint64_t addr = d->address, end = d->address + d->bytes;
        while (addr < end) {
            uint64_t next = std::min(end, (addr / cfg_.burst_size + 1) * cfg_.burst_size);
            issue_burst(*d, addr - d->address, next - addr, next == end);
            addr = next;
        }
        d->t_last_accept = now_ns();
        // Everything the channel needs of the descriptor once it lets go of it, read now: under
        // on_response it waits for the completion, and once on_complete has run the poster may
        // post the same descriptor again at once (to another queue). Reading d->queue after that
        // freed the wrong queue's channel slot (a wrapped counter that blocked the queue for good:
        // the AT deadlock of issue 24, docs/architecture.md "Flow control").
        const uint32_t queue = d->queue;
        SpanArgs span;
        const char* span_name = d->write ? "descriptor write" : "descriptor read";
        if (channel_tracks_[channel] >= 0) {
            // The channel's hold time, not data moving: kept out of the bandwidth counter.
            span.command = d->write ? "write" : "read";
            span.bytes = d->bytes;
            span.address = d->address;
            span.descriptor = d->id;
            span.queue = int32_t(d->queue);
            span.tile = int32_t(tile_);
            span.flow = d->trace_flow;
            span.bandwidth = false;
        }
        if (cfg_.channel_release == ChannelRelease::OnResponse && d->t_done < 0) {
            d->holding_channel = channel;
            sc_core::wait(channel_done_[channel]);
        }
        d = nullptr;  // the poster's again
        if (channel_tracks_[channel] >= 0)
            nctlm::trace().span(channel_tracks_[channel], span_name, t_take, now_ns(), span);
        --queue_active_[queue];
        freed_queue = int(queue);  // this channel looks for its next descriptor itself
    }
}

void DmaEngine::acquire_request(int channel, double ready_ns) {
    RequestHandoff::Grant g = request_.acquire(channel, now_ns());
    if (!g.now)
        sc_core::wait(granted_[size_t(channel)]);  // handed over when the socket is free
    double from = std::max(g.now ? g.from_ns : now_ns(), ready_ns);
    if (from > now_ns())
        sc_core::wait(until(from));
}

void DmaEngine::release_request(double free_ns) {
    int next = request_.release(free_ns);
    if (next >= 0)
        granted_[size_t(next)].notify(until(free_ns));
}

tlm::tlm_generic_payload* DmaEngine::burst_payload(DmaDescriptor& d, uint64_t offset, uint64_t length,
                                                   double issue_ns, double now_ns) {
    tlm::tlm_generic_payload* p = pool_.acquire();
    p->set_command(d.write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
    p->set_address(d.address + offset);
    p->set_data_length(uint32_t(length));
    p->set_streaming_width(uint32_t(length));
    p->set_byte_enable_ptr(nullptr);
    p->set_data_ptr(d.data ? d.data + offset : scratch_.data());  // bursts never exceed burst_size
    p->set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    TransferExt& x = ext<TransferExt>(*p);
    x.descriptor = &d;
    x.src_tile = tile_;
    x.issue_ns = issue_ns;
    x.flow = d.trace_flow;
    x.timing_only = !d.data;
    x.accept_ns = 0;
    if (d.write) {  // the engines stream the data out of the tile: cut-through from issue
        Occupancy occ = data_pipe_.reserve(issue_ns, double(length), now_ns);
        x.head_ns = occ.start_ns;
        x.tail_ns = occ.end_ns;
        trace_data(*p, d, occ.start_ns, occ.end_ns);
    } else {
        x.head_ns = x.tail_ns = issue_ns;  // only a request header leaves
    }
    if (d.t_first_issue < 0)
        d.t_first_issue = issue_ns;
    return p;
}

double DmaEngine::take_response(tlm::tlm_generic_payload& p, DmaDescriptor& d, double arrived_ns, double now_ns) {
    const TransferExt& x = ext<TransferExt>(p);
    double done = arrived_ns;
    if (p.is_response_ok()) {
        if (p.is_read()) {  // the engines write the data into the tile as it streams in
            Occupancy occ = data_pipe_.reserve(x.head_ns, double(p.get_data_length()), std::min(x.head_ns, now_ns));
            done = std::max(arrived_ns, occ.end_ns);
            trace_data(p, d, occ.start_ns, done);  // until the last byte is in, not before it arrived
            bytes_read_.add(p.get_data_length());
        } else {
            bytes_written_.add(p.get_data_length());
        }
    } else if (!d.failed) {
        d.failed = true;
        std::string why = p.get_response_status() == tlm::TLM_ADDRESS_ERROR_RESPONSE
                              ? "address error: outside the HBM address map"
                              : p.get_response_string();
        d.error = fmt::format("{}: {} of {} B at address 0x{:x} failed: {} (queue {}, descriptor {})", name(),
                              p.is_read() ? "read" : "write", p.get_data_length(), p.get_address(), why, d.queue,
                              d.id);
    }
    d.last_data_ns = std::max(d.last_data_ns, done);
    return done;
}

void DmaEngine::issue_burst(DmaDescriptor& d, uint64_t offset, uint64_t length, bool last) {
    // Request exclusion: one BEGIN_REQ at a time on the socket (held by this channel), until its
    // END_REQ. A request the next hop holds back (back-pressure) keeps it busy for an unknown time.
    retire();
    double now = now_ns();
    tlm::tlm_generic_payload* p = burst_payload(d, offset, length, now, now);
    tlm::tlm_phase phase = tlm::BEGIN_REQ;
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    tlm::tlm_sync_enum s = socket->nb_transport_fw(*p, phase, delay);
    if (s == tlm::TLM_COMPLETED) {  // refused at once (address error)
        if (last)
            release_request(now);
        burst_done(*p, false);
        return;
    }
    if (s == tlm::TLM_UPDATED && phase == tlm::END_REQ) {
        if (last)
            release_request(now + ns(delay));  // the next channel's turn starts at END_REQ
        if (delay > sc_core::SC_ZERO_TIME)
            sc_core::wait(delay);
    } else {
        sc_core::wait(end_req_);  // held back: the socket stays ours until END_REQ
        if (last)
            release_request(now_ns());
    }
}

tlm::tlm_sync_enum DmaEngine::nb_transport_bw(tlm::tlm_generic_payload& p, tlm::tlm_phase& phase,
                                              sc_core::sc_time& delay) {
    if (phase == tlm::END_REQ) {  // a request the next hop held back (back-pressure) is now accepted
        end_req_.notify(delay);
        return tlm::TLM_ACCEPTED;
    }
    if (phase != tlm::BEGIN_RESP)
        return tlm::TLM_ACCEPTED;
    retire();  // earlier responses: their calls have returned (this one's has not)
    burst_done(p, true);
    return tlm::TLM_COMPLETED;
}

void DmaEngine::trace_data(const tlm::tlm_generic_payload& p, const DmaDescriptor& d, double start, double end) {
    if (data_track_ < 0)
        return;
    SpanArgs a;
    a.command = p.is_write() ? "write" : "read";
    a.bytes = p.get_data_length();
    a.address = p.get_address();
    a.descriptor = d.id;
    a.queue = int32_t(d.queue);
    a.tile = int32_t(tile_);
    a.flow = d.trace_flow;
    a.burst = true;  // its own chain: channel -> NoC -> HBM -> data
    nctlm::trace().span(data_track_, p.is_write() ? "burst out" : "burst in", start, end, a);
}

void DmaEngine::burst_done(tlm::tlm_generic_payload& p, bool in_bw_call) {
    DmaDescriptor& d = *ext<TransferExt>(p).descriptor;
    double now = now_ns();
    take_response(p, d, now, now);
    if (in_bw_call) {
        retire_.push_back(&p);
    } else {
        p.release();
    }
    if (--d.bursts_left == 0)
        completions_.notify(d, until(d.last_data_ns + completion_ns_));
}

void DmaEngine::complete_ready() {
    while (DmaDescriptor* d = completions_.get_next_transaction())
        complete(*d);
}

void DmaEngine::complete(DmaDescriptor& d) {
    d.t_done = now_ns();
    --outstanding_;
    unlink_live(d);
    descriptors_.add(1);
    queue_latency_[d.queue]->add(d.t_done - d.t_post);
    if (d.holding_channel >= 0 && !flows_)
        channel_done_[d.holding_channel].notify(sc_core::SC_ZERO_TIME);
    if (d.failed)
        sim_error(d.error, msg::kDmaAddress);
    if (d.on_complete)
        d.on_complete(d);
}

std::vector<std::string> DmaEngine::outstanding_report() const {
    std::vector<std::string> lines;
    for (const DmaDescriptor* d = live_head_; d; d = d->live_next)
        lines.push_back(fmt::format("{}: descriptor {} ({} {} B at 0x{:x}, queue {}) posted at {:.3f} ns, "
                                    "{} bursts still in flight",
                                    name(), d->id, d->write ? "write" : "read", d->bytes, d->address, d->queue,
                                    d->t_post, d->bursts_left));
    return lines;
}

void DmaEngine::end_of_simulation() {
    double elapsed = now_ns();
    stats().counter(std::string(name()) + ".utilization", "").value =
        elapsed > 0 ? data_pipe_.busy_ns() / elapsed : 0;
}

} // namespace nctlm
