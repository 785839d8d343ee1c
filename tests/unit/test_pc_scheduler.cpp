// The banked pseudo-channel model without a SystemC kernel: each DRAM timing rule in isolation,
// the FR-FCFS choice, queue capacity, and the address-map / config checks.
#include "models/hbm/pc_scheduler.h"
#include "tests/xorshift.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>
#include <gtest/gtest.h>

using namespace nctlm;

namespace {

// Two schedulers that placed the same requests agree on every counter the fast paths touch.
void expect_same_counters(const PcCounters& a, const PcCounters& b) {
    EXPECT_EQ(a.activates, b.activates);
    EXPECT_EQ(a.reads, b.reads);
    EXPECT_EQ(a.writes, b.writes);
    EXPECT_EQ(a.turnarounds, b.turnarounds);
    EXPECT_EQ(a.refreshes, b.refreshes);
    EXPECT_EQ(a.data_busy_ns, b.data_busy_ns);
}

// trn1's HBM2e pseudo-channel (configs/platforms/trn1.yaml), built in code so each test can vary it.
HbmConfig hbm2e() {
    HbmConfig c;
    c.stacks = 1;
    c.stack_capacity = 16ull << 30;
    c.pseudo_channels = 16;
    c.pc_bandwidth = Bandwidth{25.6e9};
    c.interleave = 2048;
    c.dram_clock = Frequency{1.6e9};
    c.access_bytes = 32;
    c.bank_groups = 4;
    c.banks_per_group = 4;
    c.row_bytes = 1024;
    c.column_bits = "5-9";
    c.bank_group_bits = "10,15";
    c.bank_bits = "16-17";
    c.t_rcd = Duration(14);
    c.t_rp = Duration(14);
    c.t_ras = Duration(34);
    c.t_rc = Duration(48.75);
    c.t_cl = Duration(14);
    c.t_cwl = Duration(4);
    c.t_ccd_s = Duration(1);
    c.t_ccd_l = Duration(2);
    c.t_rrd_s = Duration(4);
    c.t_rrd_l = Duration(6);
    c.t_faw = Duration(30);
    c.t_wtr_s = Duration(6);
    c.t_wtr_l = Duration(8);
    c.t_rtw = Duration(13.75);
    c.t_wr = Duration(16);
    c.t_rtp = Duration(6);
    c.t_refi = Duration(3900);
    c.t_rfc = Duration(260);
    c.t_refi_pb = Duration(128);
    c.t_rfc_pb = Duration(130);
    c.front_end_latency = Duration(0);
    c.read_queue = c.write_queue = 32;
    c.ingress_queue = 64;
    c.write_high = 32;
    c.write_low = 0;
    return c;
}

// Stack offset of (bank group, bank, row, column) under trn1's map, pseudo-channel 0.
uint64_t offset_of(uint32_t bg, uint32_t bank, uint64_t row, uint32_t column = 0) {
    return (uint64_t(column) << 5) | (uint64_t(bg & 1) << 10) | (uint64_t(bg >> 1) << 15) | (uint64_t(bank) << 16) |
           (row << 18);
}

struct Pc {
    HbmConfig cfg;
    DramTiming t;
    BankMap map;
    PcScheduler s;
    explicit Pc(const HbmConfig& c = hbm2e()) : cfg(c), t(DramTiming::from(c)), map(c), s(c, t) {}
    void add(uint64_t tag, uint64_t offset, uint64_t bytes, double at_ns, bool write = false) {
        DramRequest r;
        r.tag = tag;
        r.write = write;
        r.bytes = bytes;
        r.ready_ns = at_ns;
        s.describe(r, map, offset);
        s.enqueue(std::move(r));
    }
    Scheduled next(double now) { return s.schedule_next(now); }
};


} // namespace

TEST(DramTiming, EveryTimingRoundsUpToWholeClockCycles) {
    DramTiming t = DramTiming::from(hbm2e());
    EXPECT_DOUBLE_EQ(t.tck, 0.625);
    EXPECT_DOUBLE_EQ(t.rcd, 14.375);  // 14 ns -> 23 cycles
    EXPECT_DOUBLE_EQ(t.faw, 30.0);    // exactly 48 cycles
    EXPECT_DOUBLE_EQ(t.burst, 1.25);  // 32 B at 25.6 GB/s
    EXPECT_DOUBLE_EQ(t.ccd_s, 1.25);  // 1 ns -> 2 cycles, not below a burst
    EXPECT_DOUBLE_EQ(t.ccd_l, 2.5);   // 2 ns -> 4 cycles
}

TEST(BankMap, BitsSelectBankGroupBankRowAndColumn) {
    HbmConfig c = hbm2e();
    BankMap m(c);
    DramLocation l = m.locate(offset_of(3, 2, 12345, 17));
    EXPECT_EQ(l.bank_group, 3u);
    EXPECT_EQ(l.bank, 2u);
    EXPECT_EQ(l.row, 12345u);
    EXPECT_EQ(l.column, 17u);
    // The pseudo-channel bits (11-14) are not part of the row.
    EXPECT_EQ(m.locate(offset_of(0, 0, 7) | (5u << 11)).row, 7u);
}

TEST(PcScheduler, A2KiBBurstOpensTwoRowsInTwoBankGroups) {
    Pc pc;
    DramRequest r;
    r.bytes = 2048;
    pc.s.describe(r, pc.map, offset_of(0, 1, 9));
    ASSERT_EQ(r.segments.size(), 2u);
    EXPECT_EQ(r.segments[0].bank_group, 0u);
    EXPECT_EQ(r.segments[1].bank_group, 1u);
    EXPECT_EQ(r.segments[0].accesses + r.segments[1].accesses, 64u);
    EXPECT_EQ(r.accesses, 64u);
}

TEST(PcScheduler, RowMissFromPrechargedBankCostsRcdPlusCl) {
    Pc pc;
    pc.add(1, offset_of(0, 0, 5), 64, 0);
    Scheduled s = pc.next(0);
    EXPECT_DOUBLE_EQ(s.first_data_ns, pc.t.rcd + pc.t.cl);
    // The second access of the row is in the same bank group: tCCD_L later.
    EXPECT_DOUBLE_EQ(s.last_data_ns, pc.t.rcd + pc.t.ccd_l + pc.t.cl + pc.t.burst);
    EXPECT_EQ(pc.s.counters().row_misses, 1u);
}

TEST(PcScheduler, RowHitSkipsTheActivateAndRowConflictAddsThePrecharge) {
    Pc pc;
    pc.add(1, offset_of(0, 0, 5), 32, 0);
    double first = pc.next(0).last_data_ns;
    double t0 = 200;  // long after: every bank constraint has expired
    pc.add(2, offset_of(0, 0, 5, 3), 32, t0);
    Scheduled hit = pc.next(t0);
    EXPECT_DOUBLE_EQ(hit.first_data_ns - t0, pc.t.cl);
    EXPECT_TRUE(hit.row_hit);
    double t1 = 400;
    pc.add(3, offset_of(0, 0, 6), 32, t1);
    Scheduled conflict = pc.next(t1);
    EXPECT_DOUBLE_EQ(conflict.first_data_ns - t1, pc.t.rp + pc.t.rcd + pc.t.cl);
    EXPECT_EQ(pc.s.counters().row_hits, 1u);
    EXPECT_EQ(pc.s.counters().row_conflicts, 1u);
    EXPECT_GT(first, 0);
}

TEST(PcScheduler, PrechargeWaitsForTras) {
    Pc pc;
    pc.add(1, offset_of(0, 0, 5), 32, 0);
    pc.next(0);
    pc.add(2, offset_of(0, 0, 6), 32, 0);  // same bank, other row, at once
    Scheduled s = pc.next(0);
    // PRE no earlier than ACT + tRAS, ACT no earlier than the first ACT + tRC.
    double act = std::max(pc.t.ras + pc.t.rp, pc.t.rc);
    EXPECT_DOUBLE_EQ(s.first_data_ns, act + pc.t.rcd + pc.t.cl);
}

TEST(PcScheduler, RefreshCollisionWaitsForTrfc) {
    Pc pc;
    double due = pc.t.refi;
    pc.add(1, offset_of(0, 0, 5), 32, due + 1);
    Scheduled s = pc.next(due + 1);
    EXPECT_DOUBLE_EQ(s.first_data_ns, due + pc.t.rfc + pc.t.rcd + pc.t.cl);
    EXPECT_EQ(pc.s.counters().refreshes, 1u);
    // Without refresh the same request starts at once.
    HbmConfig off = hbm2e();
    off.refresh = RefreshMode::Off;
    Pc quiet(off);
    quiet.add(1, offset_of(0, 0, 5), 32, due + 1);
    EXPECT_DOUBLE_EQ(quiet.next(due + 1).first_data_ns, due + 1 + pc.t.rcd + pc.t.cl);
}

TEST(PcScheduler, FawAllowsFourActivatesPerWindow) {
    Pc pc;
    // Eight 64 B reads to eight banks in alternating bank groups: tRRD_S alone would space the
    // activates 4.375 ns apart; the fifth must wait for the first + tFAW.
    for (uint32_t i = 0; i < 8; ++i)
        pc.add(i, offset_of(i % 4, i / 4, 1), 64, 0);
    std::vector<double> first;
    for (int i = 0; i < 8; ++i)
        first.push_back(pc.next(0).first_data_ns - pc.t.rcd - pc.t.cl);  // its activate (bank ready at once)
    std::sort(first.begin(), first.end());
    EXPECT_GE(first[4] - first[0], pc.t.faw - 1e-9);
    EXPECT_GE(first[1] - first[0], pc.t.rrd_s - 1e-9);
    EXPECT_EQ(pc.s.counters().activates, 8u);
}

TEST(PcScheduler, ReadWriteTurnaroundSpacesTheColumnCommands) {
    Pc pc;
    pc.add(1, offset_of(0, 0, 1), 32, 0);
    Scheduled rd = pc.next(0);
    double rd_cmd = rd.first_data_ns - pc.t.cl;
    pc.add(2, offset_of(1, 0, 1), 32, 0, true);  // other bank group, already a fresh bank
    Scheduled wr = pc.next(0);
    double wr_cmd = wr.first_data_ns - pc.t.cwl;
    EXPECT_GE(wr_cmd - rd_cmd, pc.t.rtw - 1e-9);
    pc.add(3, offset_of(1, 1, 1), 32, 0);  // same bank group as the write: tWTR_L
    Scheduled rd2 = pc.next(0);
    EXPECT_GE(rd2.first_data_ns - pc.t.cl, wr.last_data_ns + pc.t.wtr_l - 1e-9);
    EXPECT_EQ(pc.s.counters().turnarounds, 2u);
}

TEST(PcScheduler, FrFcfsServesARowHitBeforeAnOlderMiss) {
    Pc pc;
    pc.add(1, offset_of(0, 0, 5), 32, 0);
    pc.next(0);  // row 5 of bank 0 is open now
    pc.add(2, offset_of(0, 0, 9), 32, 100);  // older, a conflict
    pc.add(3, offset_of(0, 0, 5, 2), 32, 100);  // younger, a hit
    EXPECT_EQ(pc.next(100).tag, 3u);
    EXPECT_EQ(pc.next(100).tag, 2u);
}

TEST(PcScheduler, ClosedPagePolicyPrechargesAfterEachRequest) {
    HbmConfig c = hbm2e();
    c.page_policy = PagePolicy::Closed;
    Pc pc(c);
    pc.add(1, offset_of(0, 0, 5), 32, 0);
    pc.next(0);
    pc.add(2, offset_of(0, 0, 5, 1), 32, 300);
    Scheduled s = pc.next(300);
    EXPECT_FALSE(s.row_hit);
    EXPECT_DOUBLE_EQ(s.first_data_ns - 300, pc.t.rcd + pc.t.cl);  // precharged long ago: ACT at once
}

TEST(PcScheduler, QueuesCountColumnAccessEntries) {
    Pc pc;
    EXPECT_TRUE(pc.s.has_room(false, 64));  // larger than the queue: enters alone, when empty
    pc.add(1, offset_of(0, 0, 1), 2048, 0);
    EXPECT_FALSE(pc.s.has_room(false, 1));
    EXPECT_TRUE(pc.s.has_room(true, 2));   // the write buffer is separate
    EXPECT_EQ(pc.s.queued(false), 64u);
    pc.next(0);
    EXPECT_EQ(pc.s.queued(false), 0u);
    for (int i = 0; i < 16; ++i)
        pc.add(10 + i, offset_of(i % 4, 0, 1 + i), 64, 0);
    EXPECT_FALSE(pc.s.has_room(false, 2));  // 16 x 2 entries = 32
}

TEST(PcScheduler, SequentialReadsStreamNearThePeakOfTheDataBus) {
    HbmConfig c = hbm2e();
    c.refresh = RefreshMode::Off;
    Pc pc(c);
    // One PC's share of a sequential stream: its 2 KiB chunks are 32 KiB apart in the stack.
    double now = 0, last = 0;
    for (uint64_t i = 0; i < 200; ++i) {
        pc.add(i, i * 32768, 2048, now);
        Scheduled s = pc.next(now);
        last = s.last_data_ns;
        now = pc.s.next_decision_ns(now);
    }
    double gbs = 200 * 2048 / last;
    EXPECT_GT(gbs, 0.95 * 25.6);
    EXPECT_LE(gbs, 25.6 + 1e-9);
}

namespace {
std::string problem_key(const HbmConfig& c) {
    auto p = check_hbm(c);
    return p ? p->key : "";
}
} // namespace

TEST(HbmConfigCheck, RejectsImpossibleCombinations) {
    EXPECT_EQ(problem_key(hbm2e()), "");
    HbmConfig c = hbm2e();
    c.t_ras = Duration(10);
    EXPECT_EQ(problem_key(c), "t_ras");
    c = hbm2e();
    c.bank_bits = "15-16";  // 15 is a bank-group bit
    EXPECT_EQ(problem_key(c), "bank_bits");
    c = hbm2e();
    c.bank_bits = "11-12";  // pseudo-channel bits
    EXPECT_EQ(problem_key(c), "bank_bits");
    c = hbm2e();
    c.column_bits = "5-8";  // a 1 KiB row of 32 B accesses needs five column bits
    EXPECT_EQ(problem_key(c), "column_bits");
    c = hbm2e();
    c.write_low = 32;
    EXPECT_EQ(problem_key(c), "write_low");
    c = hbm2e();
    c.pseudo_channels = 12;
    EXPECT_EQ(problem_key(c), "pseudo_channels");
    c.model = HbmModel::Pipe;  // the pipe does not care
    EXPECT_EQ(problem_key(c), "");
}

TEST(HbmConfigCheck, BitListsParseRangesAndLists) {
    EXPECT_EQ(parse_bit_list("5-9"), (std::vector<uint32_t>{5, 6, 7, 8, 9}));
    EXPECT_EQ(parse_bit_list("15, 10"), (std::vector<uint32_t>{10, 15}));
    EXPECT_THROW(parse_bit_list("9-5"), UnitError);
    EXPECT_THROW(parse_bit_list("a"), UnitError);
    EXPECT_THROW(parse_bit_list("70"), UnitError);
}

namespace {
// Drives two schedulers, one with the fast paths and one placing every column by the full search,
// with the same random requests (sizes, alignments, reads and writes, writes bigger than the
// queue with a mark), and requires identical results and counters.
// time_step: the grain of arrival times (1 ns: every time stays on a dyadic grid, where the
// closed forms always apply; a DMA clock period such as 1/1.4 GHz: they often do not).
// chunk_percent: the share of requests that are one whole interleave chunk (a DMA burst: on
// trn1's map two rows in two bank groups, the shape place() takes on scalars, place_pair).
// generic_reference: compare with the generic fast paths (without place_pair) instead.
void expect_fast_paths_match_full_search(const HbmConfig& c, uint32_t seed, double time_step = 1,
                                         uint32_t chunk_percent = 0, bool generic_reference = false) {
    Pc fast(c), full(c);
    if (generic_reference)
        full.s.use_two_row_path(false);
    else
        full.s.use_fast_paths(false);
    nctlm::test::XorShift64 next{seed * 2654435761u + 1};
    double now = 0;
    for (uint64_t tag = 0; tag < 3000; ++tag) {
        uint64_t bytes = uint64_t(32) << (next() % 7);  // 32 B .. 2 KiB
        uint64_t offset = (next() % (1u << 22)) & ~(uint64_t(c.interleave) - 1) & ~(uint64_t(0xF) << 11);
        if (next() % 100 < chunk_percent)
            bytes = c.interleave;
        else
            offset += (next() % (c.interleave / 32)) * 32;
        bytes = std::min<uint64_t>(bytes, c.interleave - offset % c.interleave);
        bool write = next() % 3 == 0;
        for (Pc* pc : {&fast, &full}) {
            DramRequest r;
            r.tag = tag;
            r.write = write;
            r.bytes = bytes;
            r.ready_ns = now;
            pc->s.describe(r, pc->map, offset);
            r.mark = write && r.accesses > 8 ? r.accesses - 8 : 0;
            pc->s.enqueue(std::move(r));
        }
        if (next() % 4 == 0 || tag % 16 == 15)
            while (!fast.s.empty()) {
                now = std::max(now, fast.s.next_decision_ns(now));
                ASSERT_EQ(now, std::max(now, full.s.next_decision_ns(now)));
                Scheduled a = fast.next(now), b = full.next(now);
                ASSERT_EQ(a.tag, b.tag);
                ASSERT_EQ(a.first_data_ns, b.first_data_ns) << "tag " << a.tag;
                ASSERT_EQ(a.last_data_ns, b.last_data_ns) << "tag " << a.tag;
                ASSERT_EQ(a.mark_ns, b.mark_ns) << "tag " << a.tag;
                ASSERT_EQ(a.row_hit, b.row_hit);
            }
        now += double(next() % 200) * time_step;
    }
    const PcCounters &a = fast.s.counters(), &b = full.s.counters();
    expect_same_counters(a, b);
    EXPECT_GT(a.reads + a.writes, 10000u) << "the traffic must reach the steady state often";
}
} // namespace

TEST(PcScheduler, FastColumnPathsEqualTheFullSearch) {
    expect_fast_paths_match_full_search(hbm2e(), 1);
}

TEST(PcScheduler, FastColumnPathsEqualTheFullSearchOffTheDramClockGrid) {
    expect_fast_paths_match_full_search(hbm2e(), 6, 1 / 1.4);
    expect_fast_paths_match_full_search(hbm2e(), 7, 0.1);
}

// exact_steps() is the licence for the closed forms: whenever it holds, x + n step must equal the
// rounded chain bit for bit; and it must hold in the common case (any step, any time, no power of
// two crossed), dyadic steps such as trn1's 1.25 ns and others such as trn2's 32 B at 22.65625 GB/s.
TEST(ExactSteps, HoldsOnlyWhenTheChainEqualsTheProduct) {
    nctlm::test::XorShift64 next{88172645463325252ull};
    const double steps[] = {1.25, 2.5, 0.625, 1.0 / 3, 32 / 22.65625, 1 / 1.4, 0.1, 3.0, 1e-3};
    const int kinds = int(sizeof steps / sizeof steps[0]);
    uint64_t held = 0, tried = 0;
    for (int i = 0; i < 300000; ++i) {
        double x = double(next() % 100000000) / double(1 + next() % 1000);  // arbitrary low bits
        if (i % 10 == 0)
            x = std::ldexp(1.0, int(next() % 40)) - double(next() % 64) * 0.625;  // near a power of two
        double c = steps[next() % kinds];
        uint64_t n = next() % 130;
        double chain = x;
        for (uint64_t k = 0; k < n; ++k)
            chain += c;
        double step;
        ++tried;
        if (exact_steps(x, c, n, step)) {
            ++held;
            ASSERT_EQ(chain, x + double(n) * step) << "x " << x << " c " << c << " n " << n;
        }
    }
    EXPECT_GT(double(held), 0.8 * double(tried));
    EXPECT_LT(held, tried);
    double step;
    EXPECT_FALSE(exact_steps(1022.75, 1.25, 2, step));  // crosses 1024: refused (conservative here)
    EXPECT_TRUE(exact_steps(1000.0, 1.25, 10, step));
    EXPECT_EQ(step, 1.25);
    EXPECT_FALSE(exact_steps(0.0, 1.25, 10, step));
    // Halfway (half an ulp of 2^52): ties to even, so the rounded step depends on the running sum.
    EXPECT_FALSE(exact_steps(4503599627370496.0, 0.5, 4, step));
}

TEST(PcScheduler, FastColumnPathsEqualTheFullSearchOnOtherMapsAndTimings) {
    HbmConfig one_group_per_row = hbm2e();  // a 2 KiB burst: two rows in one bank group
    one_group_per_row.bank_group_bits = "15,16";
    one_group_per_row.bank_bits = "10,17";
    expect_fast_paths_match_full_search(one_group_per_row, 2);
    HbmConfig equal_ccd = hbm2e();  // tCCD_S = tCCD_L: bank groups no longer matter
    equal_ccd.t_ccd_l = equal_ccd.t_ccd_s;
    expect_fast_paths_match_full_search(equal_ccd, 3);
    HbmConfig closed = hbm2e();
    closed.page_policy = PagePolicy::Closed;
    closed.refresh = RefreshMode::PerBank;
    expect_fast_paths_match_full_search(closed, 4);
    HbmConfig small_rows = hbm2e();  // 256 B rows: a 2 KiB burst opens eight
    small_rows.column_bits = "5-7";
    small_rows.bank_group_bits = "8,9";
    small_rows.bank_bits = "10,15";
    expect_fast_paths_match_full_search(small_rows, 5);
}

// place()'s two-row shape (a whole 2 KiB chunk: two rows in two bank groups) on scalars
// (place_pair) against the full search on trn1's timing, and against the generic fast paths on
// trn1's and trn2's, on and off the DRAM clock grid, open and closed pages, per-bank refresh,
// writes with marks and drains. Not against the full search on trn2's timing: there the column
// time (32 B at 22.65625 GB/s) is not dyadic and equals tCCD_S, and the full search's data-bus
// term, (t + CL + burst) - CL, can exceed t + tCCD_S by an ulp, which the steady state (the
// column bus alone binds) does not follow: the fast paths, as before this shape had its own
// path, differ from the full search there by a few ulps (≈ 1e-11 ns).
TEST(PcScheduler, FastTwoRowPathEqualsTheFullSearchAndTheGenericFastPaths) {
    expect_fast_paths_match_full_search(hbm2e(), 11, 1, 75);
    expect_fast_paths_match_full_search(hbm2e(), 12, 1 / 1.4, 75);
    expect_fast_paths_match_full_search(hbm2e(), 12, 1 / 1.4, 75, true);
    HbmConfig hbm3 = hbm2e();  // trn2's pseudo-channel (configs/platforms/trn2.yaml)
    hbm3.pc_bandwidth = Bandwidth{22.65625e9};
    hbm3.t_rcd = Duration(19.4);
    hbm3.t_cl = Duration(12.5);
    hbm3.front_end_latency = Duration(0.625);
    expect_fast_paths_match_full_search(hbm3, 13, 1 / 1.4, 75, true);
    expect_fast_paths_match_full_search(hbm3, 14, 0.1, 90, true);
    expect_fast_paths_match_full_search(hbm3, 16, 1, 50, true);
    HbmConfig closed = hbm2e();
    closed.page_policy = PagePolicy::Closed;
    closed.refresh = RefreshMode::PerBank;
    expect_fast_paths_match_full_search(closed, 15, 1 / 1.4, 75);
    closed.pc_bandwidth = hbm3.pc_bandwidth;
    expect_fast_paths_match_full_search(closed, 17, 1 / 1.4, 75, true);
}

// The loosely-timed path decides each request as it arrives with enqueue_and_schedule(): it must
// equal enqueue() then schedule_next(), also when the queues are not empty (then it is exactly
// that) and across write drains (write_high/low with a single request queued).
TEST(PcScheduler, EnqueueAndScheduleEqualsEnqueueThenScheduleNext) {
    HbmConfig c = hbm2e();
    c.write_high = 8;
    c.write_low = 4;
    Pc direct(c), queued(c);
    nctlm::test::XorShift64 next{0x9E3779B97F4A7C15ull};
    DramRequest kept;  // reused like the controller's, so stale storage is exercised too
    double now = 0;
    uint64_t placed = 0, with_others = 0;
    auto request = [&](Pc& pc, DramRequest& r, uint64_t tag, uint64_t offset, uint64_t bytes, bool write) {
        r.tag = tag;
        r.write = write;
        r.bytes = bytes;
        r.ready_ns = now;
        pc.s.describe(r, pc.map, offset);
        r.mark = write && r.accesses > 8 ? r.accesses - 8 : 0;
    };
    auto expect_same = [&](const Scheduled& a, const Scheduled& b) {
        ASSERT_EQ(a.tag, b.tag);
        ASSERT_EQ(a.write, b.write);
        ASSERT_EQ(a.first_data_ns, b.first_data_ns) << "tag " << a.tag;
        ASSERT_EQ(a.last_data_ns, b.last_data_ns) << "tag " << a.tag;
        ASSERT_EQ(a.mark_ns, b.mark_ns) << "tag " << a.tag;
        ASSERT_EQ(a.row_hit, b.row_hit);
        ASSERT_EQ(a.bytes, b.bytes);
    };
    for (uint64_t tag = 0; tag < 4000; ++tag) {
        const uint64_t offset = (next() % (1u << 22)) & ~(uint64_t(2047) | uint64_t(0xF) << 11);
        const uint64_t bytes = next() % 3 ? 2048 : uint64_t(32) << (next() % 6);
        const bool write = next() % 3 == 0;
        if (next() % 8 == 0) {  // another request already waits: both sides queue it
            ++with_others;
            for (Pc* pc : {&direct, &queued}) {
                DramRequest r;
                request(*pc, r, 100000 + tag, offset ^ (uint64_t(1) << 18), 64, !write);
                pc->s.enqueue(std::move(r));
            }
        }
        request(direct, kept, tag, offset, bytes, write);
        DramRequest r;
        request(queued, r, tag, offset, bytes, write);
        const double decision = direct.s.next_decision_ns(now);
        ASSERT_EQ(decision, queued.s.next_decision_ns(now));
        queued.s.enqueue(std::move(r));
        expect_same(direct.s.enqueue_and_schedule(kept, decision), queued.next(decision));
        ++placed;
        while (!direct.s.empty()) {
            ASSERT_FALSE(queued.s.empty());
            expect_same(direct.next(decision), queued.next(decision));
        }
        ASSERT_TRUE(queued.s.empty());
        now += double(next() % 120) / 1.4;
    }
    const PcCounters &a = direct.s.counters(), &b = queued.s.counters();
    expect_same_counters(a, b);
    EXPECT_EQ(a.row_hits, b.row_hits);
    EXPECT_GT(with_others, 300u);
    EXPECT_GT(placed - with_others, 3000u);
}

// The memoized licence answers as exact_steps() itself, whatever sequence of times it is asked
// about: runs inside one binade (the memo hits), jumps across binades, non-positive and
// non-finite times, halfway steps.
TEST(ExactSteps, TheMemoizedStepperAnswersAsExactSteps) {
    nctlm::test::XorShift64 next{0xD1B54A32D192ED03ull};
    const double steps[] = {1.25, 2.5, 32 / 22.65625, 1 / 1.4, 0.1, 0.5, 3.0};
    uint64_t held = 0;
    for (double c : steps) {
        ExactStepper stepper(c);
        double x = 1000;
        for (int i = 0; i < 40000; ++i) {
            switch (next() % 16) {
            case 0: x = double(next() % 100000000) / double(1 + next() % 1000); break;  // jump
            case 1: x = std::ldexp(1.0, int(next() % 60)) - double(next() % 64) * c; break;  // near a power of two
            case 2: x = -x; break;
            case 3: x = next() % 2 ? 0.0 : std::numeric_limits<double>::infinity(); break;
            case 4: x = std::ldexp(1.0, 52 + int(next() % 3)); break;  // ulp 1..4: 0.5 is halfway at 2^53
            case 5: x = std::numeric_limits<double>::quiet_NaN(); break;
            default: x = std::fabs(x) + c * double(next() % 64); break;  // onward in time
            }
            const uint64_t n = next() % 130;
            double want, got;
            const bool ok = exact_steps(x, c, n, want);
            ASSERT_EQ(stepper(x, n, got), ok) << "x " << x << " c " << c << " n " << n;
            if (ok) {
                ++held;
                ASSERT_EQ(got, want) << "x " << x << " c " << c << " n " << n;
            }
        }
    }
    EXPECT_GT(held, 50000u);
}

// describe() against a walk over single accesses: consecutive accesses to one row of one bank
// form a segment; locate_row() (the bank table where the bank bits span few, the bit gathers
// where not) against locate().
TEST(BankMap, DescribeAndLocateRowEqualAnAccessByAccessWalk) {
    HbmConfig spread = hbm2e();  // bank bits 20 apart: no table
    spread.bank_bits = "16,30";
    HbmConfig small_rows = hbm2e();
    small_rows.column_bits = "5-7";
    small_rows.bank_group_bits = "8,9";
    small_rows.bank_bits = "10,15";
    HbmConfig hbm3 = hbm2e();  // trn2's map
    hbm3.pseudo_channels = 32;
    hbm3.bank_group_bits = "10,16";
    hbm3.bank_bits = "17-18";
    nctlm::test::XorShift64 next{12345};
    for (const HbmConfig& c : {hbm2e(), spread, small_rows, hbm3}) {
        Pc pc(c);
        const uint64_t pc_bits = uint64_t(c.pseudo_channels - 1) << 11;
        for (int i = 0; i < 20000; ++i) {
            const uint64_t off = next() % (uint64_t(1) << 34) & ~pc_bits;
            DramLocation l = pc.map.locate(off);
            uint32_t bank, bank_group;
            uint64_t row;
            pc.map.locate_row(off, c.banks_per_group, bank, bank_group, row);
            ASSERT_EQ(bank_group, l.bank_group);
            ASSERT_EQ(bank, l.bank_group * c.banks_per_group + l.bank);
            ASSERT_EQ(row, l.row);
            DramRequest r;
            r.bytes = 1 + next() % (c.interleave - off % c.interleave);
            pc.s.describe(r, pc.map, off);
            std::vector<DramSegment> want;
            uint32_t total = 0;
            for (uint64_t a = off & ~uint64_t(31); a < off + r.bytes; a += 32, ++total) {
                DramLocation m = pc.map.locate(a);
                const uint32_t flat = m.bank_group * c.banks_per_group + m.bank;
                if (!want.empty() && want.back().bank == flat && want.back().row == m.row)
                    ++want.back().accesses;
                else
                    want.push_back({flat, m.bank_group, m.row, 1});
            }
            ASSERT_EQ(r.segments.size(), want.size()) << "offset " << off << " bytes " << r.bytes;
            for (size_t k = 0; k < want.size(); ++k) {
                ASSERT_EQ(r.segments[k].bank, want[k].bank);
                ASSERT_EQ(r.segments[k].bank_group, want[k].bank_group);
                ASSERT_EQ(r.segments[k].row, want[k].row);
                ASSERT_EQ(r.segments[k].accesses, want[k].accesses);
            }
            ASSERT_EQ(r.accesses, total);
        }
    }
}
