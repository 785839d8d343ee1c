// DmaEngine's flow path (sim.timing: flow). Descriptors are taken in the engine's order (round
// robin over queues, in order within one, at most queue_channels per queue and `channels` in all)
// onto channels and queue slots that are each free again at a time, as the LT path does, and each
// is handed whole to the flow model (DescriptorFlows) once decoded. Under on_accept a channel is
// free once the descriptor's requests are issued (what the flow model says that takes); under
// on_response only when the descriptor is complete. No thread, no event per burst.
#include "models/dma/dma_engine.h"

#include <algorithm>
#include <functional>

namespace nctlm {

void DmaEngine::set_flow(DescriptorFlows& flows, uint32_t flow_tile) {
    flows_ = &flows;
    flow_tile_ = flow_tile;
    lt_channel_free_.assign(cfg_.channels, 0);
    lt_channel_busy_.assign(cfg_.channels, false);
    lt_queue_free_.assign(cfg_.queues, std::vector<double>(cfg_.queue_channels, 0));
    descriptor_ns_ = ns(descriptor_time_);
}

void DmaEngine::flow_take(double now) {
    const bool hold = cfg_.channel_release == ChannelRelease::OnResponse;
    while (lt_may_start_) {
        if (hold && std::find(lt_channel_busy_.begin(), lt_channel_busy_.end(), false) == lt_channel_busy_.end())
            return;  // every channel holds a descriptor until its completion (on_response)
        DmaDescriptor* d = take_next();  // before choosing a channel: mostly there is none to take
        if (!d) {
            lt_may_start_ = false;
            return;
        }
        // The channel free soonest. Under on_accept only its time matters (no channel is held and
        // none is traced here): lt_channel_free_ is a min-heap of the channels' times, its front the
        // one taken. Under on_response a channel is held by its descriptor: the lowest free soonest.
        int channel = -1;
        double channel_free;
        if (hold) {
            for (int c = 0; c < int(cfg_.channels); ++c)
                if (!lt_channel_busy_[size_t(c)] &&
                    (channel < 0 || lt_channel_free_[size_t(c)] < lt_channel_free_[size_t(channel)]))
                    channel = c;
            channel_free = lt_channel_free_[size_t(channel)];
        } else {
            channel_free = lt_channel_free_.front();
        }
        auto& slots = lt_queue_free_[d->queue];
        auto slot = std::min_element(slots.begin(), slots.end());
        const double t_take = std::max({now, channel_free, *slot});
        const double start = t_take + descriptor_ns_;
        d->t_first_issue = start;
        d->t_last_accept = start + flows_->start(*this, *d, start);
        if (hold) {  // held until flow_done
            d->holding_channel = channel;
            lt_channel_busy_[size_t(channel)] = true;
            *slot = 1e300;
        } else {
            std::pop_heap(lt_channel_free_.begin(), lt_channel_free_.end(), std::greater<>());
            lt_channel_free_.back() = d->t_last_accept;
            std::push_heap(lt_channel_free_.begin(), lt_channel_free_.end(), std::greater<>());
            *slot = d->t_last_accept;
            --queue_active_[d->queue];
        }
    }
}

void DmaEngine::flow_done(DmaDescriptor& d, uint64_t read_bytes, uint64_t written_bytes) {
    const double now = now_ns();
    bytes_read_.add(double(read_bytes));
    bytes_written_.add(double(written_bytes));
    d.last_data_ns = now;
    d.bursts_left = 0;
    if (d.holding_channel >= 0) {  // on_response: its channel and queue slot are free now
        lt_channel_busy_[size_t(d.holding_channel)] = false;
        lt_channel_free_[size_t(d.holding_channel)] = now;
        auto& slots = lt_queue_free_[d.queue];
        *std::max_element(slots.begin(), slots.end()) = now;
        --queue_active_[d.queue];
        d.holding_channel = -1;
        lt_may_start_ = true;
    }
    complete(d);  // hands d back to its poster, who may post it again at once
    flow_take(now);
}

} // namespace nctlm
