// DmaEngine's loosely-timed path (sim.timing: lt). The AT path (dma_engine.cpp) sends each burst
// as a 4-phase transaction and lets END_REQ pace the channel; here the platform's DmaLtScheduler
// takes every descriptor, places it on the earliest free channel (and queue slot) at its time, and
// sends its bursts with b_transport one after another: each burst leaves when the request socket
// is free, i.e. when the next hop accepted the previous one (TransferExt::accept_ns, derived by
// the NoC and HBM from their credit and queue timing). The socket goes to descriptors in the order
// they were taken, each holding it for all its bursts: the AT hand-off (request_handoff.h).
// Responses come back in the same call, with the time their data reaches the tile; completions
// are posted at their absolute time, so a poster sees them when AT would (docs/performance.md).
#include "models/common/errors.h"
#include "models/common/trace.h"
#include "models/dma/dma_engine.h"

#include <algorithm>
#include <fmt/format.h>

namespace nctlm {

void DmaEngine::set_loosely_timed(DmaLtScheduler& scheduler) {
    if (lt_)
        return;
    lt_ = true;
    scheduler.add(*this);
    lt_channel_free_.assign(cfg_.channels, 0);
    lt_channel_busy_.assign(cfg_.channels, false);
    lt_queue_free_.assign(cfg_.queues, std::vector<double>(cfg_.queue_channels, 0));
}

bool DmaEngine::lt_start(double now) {
    if (!lt_may_start_ || lt_active_.size() >= cfg_.channels)
        return false;
    DmaDescriptor* d = take_next();
    if (!d) {
        lt_may_start_ = false;
        return false;
    }
    // The earliest free channel, and the earliest free slot of the descriptor's queue.
    int channel = -1;
    for (int c = 0; c < int(cfg_.channels); ++c)
        if (!lt_channel_busy_[size_t(c)] && (channel < 0 || lt_channel_free_[size_t(c)] < lt_channel_free_[size_t(channel)]))
            channel = c;
    auto& slots = lt_queue_free_[d->queue];
    auto slot = std::min_element(slots.begin(), slots.end());
    double t_take = std::max({now, lt_channel_free_[size_t(channel)], *slot});
    *slot = 1e300;  // held until the descriptor releases its channel
    lt_channel_busy_[size_t(channel)] = true;
    lt_active_.push_back({d, channel, d->address, t_take, t_take + ns(descriptor_time_)});
    return true;
}

void DmaEngine::lt_finish(const LtActive& a) {
    DmaDescriptor& d = *a.d;
    // on_response holds the channel for the round trip: until the completion is visible.
    double release =
        cfg_.channel_release == ChannelRelease::OnResponse ? d.last_data_ns + completion_ns_ : d.t_last_accept;
    lt_channel_free_[size_t(a.channel)] = release;
    lt_channel_busy_[size_t(a.channel)] = false;
    auto& slots = lt_queue_free_[d.queue];
    *std::max_element(slots.begin(), slots.end()) = release;
    if (channel_tracks_[size_t(a.channel)] >= 0) {
        SpanArgs s;
        s.command = d.write ? "write" : "read";
        s.bytes = d.bytes;
        s.address = d.address;
        s.descriptor = d.id;
        s.queue = int32_t(d.queue);
        s.tile = int32_t(tile_);
        s.flow = d.trace_flow;
        s.bandwidth = false;
        nctlm::trace().span(channel_tracks_[size_t(a.channel)], d.write ? "descriptor write" : "descriptor read",
                            a.t_take, release, s);
    }
    --queue_active_[d.queue];
    lt_may_start_ = true;
}

bool DmaEngine::lt_take(double t) {
    while (lt_start(t)) {
    }
    return !lt_active_.empty();
}

double DmaEngine::lt_next_issue() const {
    const LtActive& a = lt_active_.front();
    return std::max(a.ready, lt_request_free_);
}

// The request socket is handed as under AT (RequestHandoff): to descriptors in the order they
// were taken, each keeping it for all its bursts until the last one is accepted.
bool DmaEngine::lt_issue() {
    LtActive& a = lt_active_.front();
    DmaDescriptor& d = *a.d;
    const double issue = lt_next_issue();
    // Cut on burst_size boundaries, as the AT channel does.
    uint64_t end = d.address + d.bytes;
    uint64_t next = std::min(end, (a.next / cfg_.burst_size + 1) * cfg_.burst_size);
    double accepted = lt_burst(d, a.next - d.address, next - a.next, issue);
    a.next = next;
    if (next == end) {
        d.t_last_accept = accepted;
        LtActive done = a;
        lt_active_.pop_front();
        lt_finish(done);  // its channel (and queue slot) free again: the next descriptor may go
        return lt_take(issue);
    }
    return true;
}

double DmaEngine::lt_burst(DmaDescriptor& d, uint64_t offset, uint64_t length, double t) {
    t = std::max(t, lt_request_free_);  // request exclusion on the shared socket
    const double kernel_now = now_ns();
    tlm::tlm_generic_payload* p = burst_payload(d, offset, length, t, kernel_now);
    const TransferExt& x = ext<TransferExt>(*p);
    sc_core::sc_time delay = until(t);
    socket->b_transport(*p, delay);
    double arrived = kernel_now + ns(delay);  // the response (its last byte) is at the tile
    double accepted = std::max(t, x.accept_ns);
    take_response(*p, d, arrived, kernel_now);
    if (!p->is_response_ok())
        accepted = t;
    p->release();
    lt_request_free_ = accepted;
    if (--d.bursts_left == 0)
        completions_.notify(d, until(d.last_data_ns + completion_ns_));
    return accepted;
}

} // namespace nctlm
