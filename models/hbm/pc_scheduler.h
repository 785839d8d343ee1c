// The banked model of one HBM pseudo-channel: bank groups x banks with open-row state, DRAM
// command timing, refresh, and an FR-FCFS scheduler over finite read and write queues. Pure C++
// (times in ns): the AT controller and any other front end call the same class.
//
// Scheduling works on whole requests (one TLM transaction, at most one PC's interleave chunk).
// At each decision the scheduler picks a queued request (FR-FCFS: the oldest row hit; else the
// request whose bank can take its PRE/ACT soonest, the oldest among equals), then places its commands at the earliest times every constraint
// allows: PRE/ACT on the row command bus (tRP, tRAS, tRC, tRRD_S/L, tFAW), RD/WR on the column
// bus (tRCD, tCCD_S/L, read<->write turnaround, data-bus occupancy), refresh (tREFI/tRFC). A
// request's column accesses alternate between its rows when they sit in different bank groups
// (tCCD_S instead of tCCD_L), as a controller interleaving its queued column commands would.
// Decisions run `lookahead` (tRP + tRCD) before the column bus frees, so the next row can be
// opened while the current data streams; a request arriving after that decision waits one turn.
#pragma once

#include "models/hbm/hbm_config.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <vector>

namespace nctlm {

// Whether adding c to x n times, rounding after each addition, equals x + n step exactly, with
// `step` (set here) = c rounded to whole ulps of x: true when the chain stays below the next power
// of two above x and c is not exactly halfway between two multiples of that ulp. Then the scheduler
// replaces such a chain by one multiply-add with the same bits.
bool exact_steps(double x, double c, uint64_t n, double& step);

// exact_steps() for one fixed c, remembering c rounded to the ulps of the last binade asked about
// (a simulation's times stay in one binade for long): the same answers for a few instructions.
class ExactStepper {
public:
    explicit ExactStepper(double c = 0) : c_(c) {}
    bool operator()(double x, uint64_t n, double& step) {
        step = c_;
        if (n == 0)
            return true;
        const uint64_t ex = bits(x) >> 52;  // with the sign bit: a negative x never matches
        if (ex != ex_)
            learn(ex);
        if (!ok_)
            return false;
        step = step_;
        return bits(x + double(n) * step_) >> 52 == ex;
    }

private:
    static uint64_t bits(double v) {
        uint64_t b;
        std::memcpy(&b, &v, sizeof b);
        return b;
    }
    void learn(uint64_t ex);
    double c_, step_ = 0;
    uint64_t ex_ = ~uint64_t(0);
    bool ok_ = false;
};

// Every timing in ns, rounded up to whole cycles of the DRAM clock.
struct DramTiming {
    double tck, burst, rcd, rp, ras, rc, cl, cwl, ccd_s, ccd_l, rrd_s, rrd_l, faw, wtr_s, wtr_l, rtw, wr, rtp, refi,
        rfc, refi_pb, rfc_pb, front_end;
    static DramTiming from(const HbmConfig& c);
};

// Where a stack offset lands inside its pseudo-channel.
struct DramLocation {
    uint32_t bank_group, bank;  // bank: index within the group
    uint64_t row;
    uint32_t column;
};

// Address bits -> (bank group, bank, row, column) per hbm.*_bits; the row is every bit not used
// by the byte-in-access, column, bank-group, bank or pseudo-channel fields.
class BankMap {
public:
    explicit BankMap(const HbmConfig& c);
    DramLocation locate(uint64_t stack_offset) const;
    // locate() without the column: the flat bank (bank_group x banks_per_group + bank), the bank
    // group and the row, for describing a request (inline: runs per request).
    void locate_row(uint64_t off, uint32_t banks_per_group, uint32_t& bank, uint32_t& bank_group,
                    uint64_t& row) const {
        if (banks_per_group == table_banks_per_group_) {
            const uint32_t e = bank_table_[(off >> table_shift_) & table_mask_];
            bank = e & 0xFFFF;
            bank_group = e >> 16;
        } else {
            bank_group = uint32_t(gather(off, bank_group_));
            bank = bank_group * banks_per_group + uint32_t(gather(off, bank_));
        }
        row = gather(off, row_);
    }
    // Bits that change only within one row of one bank (byte and column bits).
    uint64_t in_row_mask() const { return in_row_mask_; }
    uint64_t in_row_run_mask() const { return in_row_run_mask_; }  // its contiguous low bits
    uint32_t access_bytes() const { return access_bytes_; }
    uint32_t access_shift() const { return access_shift_; }  // log2(access_bytes)

private:
    // A bit list as runs of consecutive bits: gathering costs one shift-and-mask per run.
    struct Run {
        uint32_t from = 0, to = 0;  // source bit, destination bit
        uint64_t mask = 0;          // of the run, at bit 0 (0: an unused inline run)
    };
    struct Field {  // the first two runs inline (every field of the shipped maps has one or two)
        Run r0, r1;
        std::vector<Run> more;
    };
    static Field runs(const std::vector<uint32_t>& bits);
    static uint64_t gather(uint64_t v, const Field& f) {
        uint64_t out = ((v >> f.r0.from) & f.r0.mask) << f.r0.to | ((v >> f.r1.from) & f.r1.mask) << f.r1.to;
        for (const Run& r : f.more)
            out |= ((v >> r.from) & r.mask) << r.to;
        return out;
    }
    Field column_, bank_group_, bank_, row_;
    // Bank group and flat bank (bank_group << 16 | bank) of every value of the bits from the lowest
    // bank or bank-group bit to the highest, when they span few (all shipped maps: 8 or 9 bits).
    std::vector<uint32_t> bank_table_;
    static constexpr uint32_t kNoTable = ~0u;
    uint32_t table_shift_ = 0, table_banks_per_group_ = kNoTable;
    uint64_t table_mask_ = 0;
    uint64_t in_row_mask_ = 0, in_row_run_mask_ = 0;
    uint32_t access_bytes_, access_shift_;
};

struct DramSegment {  // consecutive accesses of a request to one row
    uint32_t bank;    // flat: bank_group x banks_per_group + bank
    uint32_t bank_group;
    uint64_t row;
    uint32_t accesses;
};

struct DramRequest {
    uint64_t tag = 0;         // the caller's handle (returned in Scheduled)
    bool write = false;
    double ready_ns = 0;      // arrival + front end: no command before this
    uint64_t bytes = 0;
    uint32_t accesses = 0;    // column accesses: queue entries it takes
    uint32_t mark = 0;        // report when this many accesses have their data done (0: none)
    std::vector<DramSegment> segments;
};

struct Scheduled {
    uint64_t tag;
    bool write;
    double first_data_ns, last_data_ns;
    double mark_ns;  // data end of the request's `mark`-th access
    uint64_t bytes;
    bool row_hit;  // its first row was already open
};

struct PcCounters {
    uint64_t row_hits = 0, row_misses = 0, row_conflicts = 0, activates = 0, refreshes = 0;
    uint64_t reads = 0, writes = 0, turnarounds = 0;
    double data_busy_ns = 0;
};

class PcScheduler {
public:
    PcScheduler(const HbmConfig& cfg, const DramTiming& timing);

    // Splits [stack_offset, +bytes) into per-row segments (same PC assumed).
    void describe(DramRequest& r, const BankMap& map, uint64_t stack_offset) const;

    // Queues hold column-access entries (access_bytes each), like a DRAM controller's transaction
    // queue; a request larger than a whole queue enters it alone, once it is empty.
    bool has_room(bool write, uint32_t accesses) const {
        size_t used = write ? write_used_ : read_used_, cap = write ? write_cap_ : read_cap_;
        return used == 0 || used + accesses <= cap;
    }
    size_t queued(bool write) const { return write ? write_used_ : read_used_; }  // entries in use
    bool empty() const { return reads_.empty() && writes_.empty(); }
    void enqueue(DramRequest&& r);  // requires has_room(r.write)

    // Picks one queued request at `now` and places its commands (refreshes due first).
    Scheduled schedule_next(double now);
    // enqueue(r) then schedule_next(now), the same result; with both queues empty (the LT path
    // decides each request as it arrives) r is placed without entering a queue, and keeps its storage.
    Scheduled enqueue_and_schedule(DramRequest& r, double now);
    // When the next decision should run: `lookahead` before the column bus frees, not before `now`.
    double next_decision_ns(double now) const;

    const PcCounters& counters() const { return counters_; }
    // Tests only: place every column by the full search (the reference for the fast paths).
    void use_fast_paths(bool on) { fast_paths_ = on; }
    // Tests only: the fast paths without place_pair (their generic form is its reference).
    void use_two_row_path(bool on) { two_rows_ = on; }
    const DramTiming& timing() const { return t_; }

private:
    struct Bank {
        bool open = false;
        uint64_t row = 0;
        double col_ready = 0;   // ACT + tRCD
        double pre_ready = 0;   // earliest PRE: ACT + tRAS, RD + tRTP, write data end + tWR
        double act_ready = 0;   // earliest ACT: PRE + tRP, ACT + tRC, refresh end
    };
    void refresh_until(double now);
    double open_row(const DramSegment& s, double t0);  // returns when its columns may issue
    static constexpr size_t kWaveMax = 8;  // segments whose columns interleave
    void place(const DramRequest& r, double t0, Scheduled& out);
    void place_waves(const DramRequest& r, double t0, Scheduled& out);  // any shape
    void place_pair(const DramRequest& r, double t0, Scheduled& out);  // place()'s most common shape
    void write_back(size_t n, const uint32_t* bank, const uint32_t* bg, const double* last_t, bool write,
                    double last_col, uint32_t last_bg, double data_free);
    bool hits(const DramRequest& r) const;
    double earliest_start(const DramRequest& r) const;  // when its first command could issue

    DramTiming t_;
    PagePolicy policy_;
    RefreshMode refresh_;
    uint32_t banks_per_group_;
    size_t read_cap_, write_cap_, write_high_, write_low_;
    std::vector<Bank> banks_;
    // A FIFO of requests that FR-FCFS may take from anywhere: a ring of slots that keep their
    // segment storage once placed (no allocation, no moves of a std::deque's blocks).
    class RequestRing {
    public:
        size_t size() const { return count_; }
        bool empty() const { return count_ == 0; }
        DramRequest& operator[](size_t i) { return slots_[(head_ + i) & mask_]; }
        // Moves r in; r leaves with the free slot's old segment storage (for reuse).
        void push_back(DramRequest& r) {
            if (count_ == slots_.size())
                grow();
            DramRequest& slot = slots_[(head_ + count_++) & mask_];
            std::vector<DramSegment> storage = std::move(slot.segments);
            slot = std::move(r);
            r.segments = std::move(storage);
        }
        void pop_front() {
            head_ = (head_ + 1) & mask_;
            --count_;
        }
        void erase(size_t i) {  // keeps the order; the freed slot's storage goes last
            for (; i + 1 < count_; ++i)
                std::swap((*this)[i], (*this)[i + 1]);
            --count_;
        }

    private:
        void grow() {
            std::vector<DramRequest> bigger(std::max<size_t>(8, 2 * slots_.size()));
            for (size_t i = 0; i < count_; ++i)
                bigger[i] = std::move((*this)[i]);
            slots_.swap(bigger);
            head_ = 0;
            mask_ = slots_.size() - 1;
        }
        std::vector<DramRequest> slots_;  // a power of two of them
        size_t head_ = 0, count_ = 0, mask_ = 0;
    };
    RequestRing reads_, writes_;
    size_t read_used_ = 0, write_used_ = 0;
    bool draining_ = false;
    // row command bus
    std::array<double, 4> last_acts_{-1e18, -1e18, -1e18, -1e18};  // ring for tFAW
    size_t act_slot_ = 0;
    double last_act_ = -1e18;
    std::vector<double> last_act_bg_;
    // column bus
    double last_col_ = -1e18;
    uint32_t last_col_bg_ = ~0u;
    bool last_col_write_ = false;
    double last_read_cmd_ = -1e18;
    std::vector<double> write_data_end_bg_;
    double write_data_end_any_ = -1e18;  // their maximum (each only grows)
    ExactStepper ccd_s_steps_, ccd_l_steps_, burst_steps_;  // the closed forms' licences
    double data_free_ = 0;
    // refresh
    double next_refresh_;
    uint32_t next_refresh_bank_ = 0;
    PcCounters counters_;
    bool fast_paths_ = true, two_rows_ = true;
    // Segment storage of placed requests, handed back by enqueue() for describe() to reuse.
    mutable std::vector<std::vector<DramSegment>> spare_segments_;
};

} // namespace nctlm
