// One HBM stack's controller. Per pseudo-channel either the banked model (PcScheduler: banks,
// rows, DRAM timing, refresh, FR-FCFS over finite read/write queues) or the wave-1 pipe
// (hbm.model). Flow control is the base protocol's: a request whose PC queue is full waits in a
// shared ingress buffer (hbm.ingress_queue requests, so one busy PC does not block the others);
// with that full too it is not accepted (no END_REQ) until the scheduler frees room, and the
// initiator may not send another request meanwhile (request exclusion). Writes are posted:
// acknowledged once inside the PC's write buffer.
//
// Any initiator may use the socket: a payload without a TransferExt (a user's own module) gets
// its response when the last data byte is out; with one, BEGIN_RESP comes at the first data
// byte and the extension carries head/tail times for the NoC to stream the data.
#pragma once

#include "models/common/bandwidth_pipe.h"
#include "models/common/level_sweep.h"
#include "models/common/peq.h"
#include "models/common/slot_times.h"
#include "models/common/stats.h"
#include "models/common/trace.h"
#include "models/hbm/address_map.h"
#include "models/hbm/hbm_config.h"
#include "models/hbm/pc_scheduler.h"
#include "models/hbm/queue_leave_times.h"
#include "models/hbm/sparse_memory.h"

#include <deque>
#include <limits>
#include <memory>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_target_socket.h>
#include <vector>

namespace nctlm {

class HbmController : public sc_core::sc_module {
public:
    tlm_utils::simple_target_socket<HbmController> socket;

    // Keeps its own copies of the config and the address map. `chip`: the chip it belongs to (a
    // request for another chip's address is refused like an address outside the map).
    HbmController(sc_core::sc_module_name name, const HbmConfig& cfg, const AddressMap& map, uint32_t stack,
                  uint32_t chip = 0);

    const SparseMemory& memory() const { return memory_; }
    // Seeds memory without simulated time (test set-up, workload images).
    void preload(uint64_t stack_offset, const unsigned char* data, uint64_t length);

    // Requests whose last data byte falls in [from, to] count in the measured figures below
    // and in the read-latency histogram (a testbench's warm-up and end). Default: everything.
    void measure_between(double from_ns, double to_ns);
    double measured_read_bytes() const { return measured_read_bytes_; }
    double measured_write_bytes() const { return measured_write_bytes_; }
    uint64_t measured_requests() const { return measured_requests_; }
    const Histogram& read_latency() const { return *read_latency_; }  // acceptance -> last read byte
    PcCounters bank_counters() const;  // summed over PCs (banked model)

    // Loosely-timed mode (sim.timing: lt, hbm_controller_lt.cpp): registers b_transport on the
    // socket. Call during elaboration. Each request is fed to its PC's model (the same
    // PcScheduler or pipe as under AT) at its arrival time and answered in the same call with
    // the times the model computes; see the .cpp for how finite queues become timing.
    void enable_loosely_timed();

    // Flow mode (sim.timing: flow): the flow model moves the bytes, the controller keeps the
    // books. `bytes` of one descriptor's part in this stack, in `requests` requests, accepted at
    // `accepted_ns` and done at `last_ns`: the byte and burst counters and the measured window.
    void record_flow(bool write, uint64_t bytes, uint64_t requests, double accepted_ns, double last_ns);
    // Functional data of a flow (hbm.functional): stores or fills `length` bytes at `stack_offset`.
    void access_flow(uint64_t stack_offset, unsigned char* data, uint64_t length, bool write);

private:
    struct Waiting {
        tlm::tlm_generic_payload* p;
        HbmLocation loc;
        double accepted_ns;
    };
    // The last `size` of the times pushed, kept at most `depth` (as a deque trimmed after each
    // push) in a ring of more slots than any depth (a queue's entries + 1): no allocation per request.
    struct Pc {
        std::unique_ptr<PcScheduler> sched;  // banked
        BandwidthPipe pipe;                  // pipe
        Histogram* wait_ns;                  // pipe: time a burst waited for its PC
        QueueStats reads, writes;
        std::deque<Waiting> ingress;        // accepted, waiting for room in this PC's queue
        sc_core::sc_event wake;
        bool decision_pending = false;
        int track;
        // lt: when recent requests left the read / write queue (their decision), oldest first.
        QueueLeaveTimes lt_read_left, lt_write_left;
        LevelSweep lt_reads, lt_writes;  // lt: queue entries in use, replayed in time order for the statistics
    };
    struct Slot {  // a request from acceptance until its commands are placed
        tlm::tlm_generic_payload* p = nullptr;  // reads only: answered when data is out
        double accepted_ns = 0;
        uint64_t offset = 0;
    };
    tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload& p, tlm::tlm_phase& phase, sc_core::sc_time& delay);
    tlm::tlm_sync_enum begin_pipe(tlm::tlm_generic_payload& p, const HbmLocation& loc, double arrival);
    void admit(tlm::tlm_generic_payload& p, const HbmLocation& loc, double accepted_ns);
    bool try_accept(tlm::tlm_generic_payload& p, const HbmLocation& loc);  // false: no room anywhere
    void refill(uint32_t pc);
    uint32_t accesses(const tlm::tlm_generic_payload& p, const HbmLocation& loc) const;
    void decide(uint32_t pc);
    void wake_later(uint32_t pc);
    static void notify_at(sc_core::sc_event& e, double t_ns);
    void respond(tlm::tlm_generic_payload& p, double head_ns, double tail_ns);
    void queue_response(tlm::tlm_generic_payload& p, const tlm::tlm_phase& phase);
    void send_responses();
    void count(bool write, uint64_t bytes, double accepted_ns, double last_ns);
    void end_of_simulation() override;
    void trace_pc(const tlm::tlm_generic_payload& p, uint32_t pseudo_channel, double start, double end);
    void b_transport_lt(tlm::tlm_generic_payload& p, sc_core::sc_time& delay);

    HbmConfig cfg_;
    AddressMap map_;
    BankMap bank_map_;
    DramTiming timing_;
    uint32_t stack_, chip_;
    std::vector<Pc> pcs_;
    std::vector<Slot> slots_;
    std::vector<uint64_t> free_slots_;
    std::vector<SpanArgs> slot_args_;  // tracing only: each slot's span args
    TraceCounter ingress_track_;
    // The request the controller could not accept yet (request exclusion: at most one).
    size_t ingress_used_ = 0;
    tlm::tlm_generic_payload* blocked_ = nullptr;
    HbmLocation blocked_loc_{};
    SparseMemory memory_;
    Peq<HbmController> resp_peq_;
    std::deque<tlm::tlm_generic_payload*> responses_;  // BEGIN_RESP exclusion: one until END_RESP
    bool response_busy_ = false;
    double measure_from_ = 0, measure_to_ = std::numeric_limits<double>::infinity();
    double measured_read_bytes_ = 0, measured_write_bytes_ = 0;
    uint64_t measured_requests_ = 0;
    Counter &bytes_read_, &bytes_written_, &bursts_, &refused_;
    Histogram* read_latency_;
    LevelSweep lt_ingress_;      // lt: ingress slots in use, for the trace counter
    SlotTimes lt_ingress_free_;  // lt: the stack's ingress buffer slots, when each is free again
    DramRequest lt_request_;     // lt: the request being placed (tag 0)
};

} // namespace nctlm
