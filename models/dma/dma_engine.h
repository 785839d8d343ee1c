// A NeuronCore's DMA block: queues (in order within a queue, round-robin across queues), a
// channel pool, descriptors cut into bursts sent as AT transactions. A channel is freed when
// the next hop accepts a descriptor's last burst (END_REQ), or under `channel_release:
// on_response` only when the descriptor completes (the old round-trip hold, kept for ablation).
#pragma once

#include "models/common/bandwidth_pipe.h"
#include "models/common/sim.h"
#include "models/common/stats.h"
#include "models/common/transfer.h"
#include "models/dma/dma_config.h"
#include "models/dma/dma_cost.h"
#include "models/dma/descriptor_flows.h"
#include "models/dma/dma_descriptor.h"
#include "models/dma/dma_lt_scheduler.h"
#include "models/dma/request_handoff.h"

#include <deque>
#include <string>
#include <systemc>
#include <tlm>
#include <tlm_utils/peq_with_get.h>
#include <tlm_utils/simple_initiator_socket.h>
#include <vector>

namespace nctlm {

class DmaEngine : public sc_core::sc_module {
public:
    tlm_utils::simple_initiator_socket<DmaEngine> socket;

    SC_HAS_PROCESS(DmaEngine);
    DmaEngine(sc_core::sc_module_name name, const DmaConfig& cfg, uint32_t tile);

    // Queues a descriptor now (any process may call it). The caller keeps it alive until done.
    void post(DmaDescriptor& d);
    // A PE DMA instruction's turn on the engines (dma_cost.h), the same in every timing mode: from
    // `ready_ns`, behind earlier instructions, for its busiest engine's share (packets x
    // dma.packet_overhead + bytes at the theoretical rate); the caller posts the descriptors paced
    // over that span.
    Occupancy book_instruction(const DmaTransferShape& shape, double ready_ns);
    const DmaCostRules& cost_rules() const { return rules_; }
    const DmaConfig& config() const { return cfg_; }
    uint32_t tile() const { return tile_; }
    size_t outstanding() const { return outstanding_; }
    std::vector<std::string> outstanding_report() const;

    // Loosely-timed mode (sim.timing: lt, dma_engine_lt.cpp): call during elaboration. The
    // scheduler (shared by a platform's engines) takes descriptors instead of the channel threads
    // and sends each burst with b_transport at its time, in global time order. Channels, queues
    // and the request socket stay finite resources, each with the time it is free again; the next
    // hop's accept time (TransferExt::accept_ns) paces the next burst.
    void set_loosely_timed(DmaLtScheduler& scheduler);
    bool loosely_timed() const { return lt_; }

    // Flow mode (sim.timing: flow, dma_engine_flow.cpp): call during elaboration. Descriptors are
    // taken onto channels and queue slots as under LT (each free again at a time) and handed to
    // `flows` whole; it calls flow_done(d) at the time the descriptor is complete.
    // `flow_tile`: the engine's index among every chip's tiles, the flow model's (read per descriptor).
    void set_flow(DescriptorFlows& flows, uint32_t flow_tile);
    bool flow_mode() const { return flows_ != nullptr; }
    uint32_t flow_tile() const { return flow_tile_; }
    void flow_done(DmaDescriptor& d, uint64_t read_bytes, uint64_t written_bytes);

private:
    void channel_thread(int channel);
    DmaDescriptor* take_next();
    void wake_idle();
    // A burst's payload from the pool, its TransferExt filled in and a write's data streaming out
    // of the tile from `issue_ns` (both modes; `now_ns`: the kernel's time).
    tlm::tlm_generic_payload* burst_payload(DmaDescriptor& d, uint64_t offset, uint64_t length, double issue_ns,
                                            double now_ns);
    // A burst's response reached the tile at `arrived_ns`: read data into the tile, byte counts, the
    // descriptor's first failure. Returns when its data is in; `now_ns`: the kernel's time.
    double take_response(tlm::tlm_generic_payload& p, DmaDescriptor& d, double arrived_ns, double now_ns);
    void issue_burst(DmaDescriptor& d, uint64_t offset, uint64_t length, bool last);
    void burst_done(tlm::tlm_generic_payload& p, bool in_bw_call);
    void retire();  // releases retire_
    void trace_data(const tlm::tlm_generic_payload& p, const DmaDescriptor& d, double start, double end);
    tlm::tlm_sync_enum nb_transport_bw(tlm::tlm_generic_payload& p, tlm::tlm_phase& phase, sc_core::sc_time& delay);
    void complete_ready();
    void complete(DmaDescriptor& d);  // at the kernel's time: done, statistics, on_complete
    void end_of_simulation() override;

    DmaConfig cfg_;
    DmaCostRules rules_;
    // PE instructions take the engines one after another, each for its busiest engine's time
    // (booked in ns: 1 "byte" = 1 ns). Instructions on disjoint engines do not overlap yet.
    BandwidthPipe instruction_time_;
    uint32_t tile_;
    std::vector<std::deque<DmaDescriptor*>> queues_;
    std::vector<uint32_t> queue_active_;
    size_t queued_ = 0;  // descriptors waiting in queues_, all together
    uint32_t rr_next_ = 0;
    sc_core::sc_event end_req_;
    std::vector<sc_core::sc_event> channel_done_;
    // Idle channels, longest idle first: a posted descriptor wakes one (not all of them).
    std::deque<int> idle_;
    std::vector<sc_core::sc_event> wake_;
    // Request exclusion on the shared socket, handed over at END_REQ in first-come-first-served
    // order (request_handoff.h): a waiting channel sleeps until its turn, no re-polling.
    RequestHandoff request_;
    std::vector<sc_core::sc_event> granted_;
    void acquire_request(int channel, double ready_ns);
    void release_request(double free_ns);
    // The engines' data path into/out of the tile. Gap-filling: a write booked at issue must not
    // push back read data that arrived (head) earlier but is delivered (tail) later.
    LinkSchedule data_pipe_;
    PayloadPool<TransferExt> pool_;
    // Timing-only bursts (no functional data) point here: a target may dereference the data
    // pointer of any payload (IEEE 1666-2011 14.11: never null). Its contents mean nothing.
    std::vector<unsigned char> scratch_;
    // Payloads whose transaction ended inside our nb_transport_bw: released only once that call
    // has returned (14.7: the caller may still use the payload until then), at the next burst
    // issued or response taken. No process and no delta cycle per burst for it.
    std::vector<tlm::tlm_generic_payload*> retire_;
    tlm_utils::peq_with_get<DmaDescriptor> completions_;
    sc_core::sc_time descriptor_time_;
    double completion_ns_;
    size_t outstanding_ = 0;
    uint64_t next_id_ = 0;
    // Posted and not done, in post order (by id), for deadlock reports: a list threaded through the
    // descriptors (DmaDescriptor::live_prev/next), O(1) in and out with no allocation (a vector's
    // find-and-erase made a million-descriptor window quadratic, issue 23; a map cost a node each).
    DmaDescriptor *live_head_ = nullptr, *live_tail_ = nullptr;
    void link_live(DmaDescriptor& d);
    void unlink_live(DmaDescriptor& d);
    Counter &bytes_read_, &bytes_written_, &descriptors_;
    const bool tracing_;  // trace().enabled() when built (as channel_tracks_ are)
    std::vector<Histogram*> queue_latency_;  // post -> done per queue
    std::vector<int> channel_tracks_;
    int data_track_ = -1;                 // bursts streaming into / out of the tile
    std::vector<int> queue_counters_;     // descriptors waiting per queue (created when sampled)
    void sample_queue(uint32_t q);

    // Loosely-timed path (dma_engine_lt.cpp).
    struct LtActive {  // a descriptor holding a channel
        DmaDescriptor* d;
        int channel;
        uint64_t next;     // address of its next burst
        double t_take;
        double ready;      // read: it may use the request socket from then on
    };
    friend class DmaLtScheduler;
    bool lt_take(double t);            // queued descriptors onto free channels at `t`; false: none active
    double lt_next_issue() const;      // when the front descriptor's next burst goes (lt_take was true)
    bool lt_issue();                   // sends it; false: no descriptor active any more
    bool lt_start(double now);  // a queued descriptor onto a free channel; false: none
    void lt_finish(const LtActive& a);
    // Sends one burst at local time `t` (ns); returns when the socket may take the next one.
    double lt_burst(DmaDescriptor& d, uint64_t offset, uint64_t length, double t);
    bool lt_ = false;
    DmaLtScheduler* lt_scheduler_ = nullptr;
    bool lt_posted_ = false, lt_queued_ = false;  // in the scheduler's lists
    bool lt_may_start_ = false;  // a descriptor was posted or a channel freed since take_next found none
    std::deque<LtActive> lt_active_;                 // in the order taken: the front holds the socket
    std::vector<double> lt_channel_free_;            // per channel: free again at
    std::vector<bool> lt_channel_busy_;
    std::vector<std::vector<double>> lt_queue_free_; // per queue, per slot of queue_channels
    double lt_request_free_ = 0;                     // the request socket: next BEGIN at

    // Flow path (dma_engine_flow.cpp): the LT channel and queue-slot times, no scheduler.
    void flow_take(double now);
    DescriptorFlows* flows_ = nullptr;
    double descriptor_ns_ = 0;  // ns(descriptor_time_)
    uint32_t flow_tile_ = 0;
};

} // namespace nctlm
