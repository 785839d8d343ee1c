#include "models/hbm/pc_scheduler.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace nctlm {

namespace {
uint32_t log2u(uint64_t v) {
    uint32_t n = 0;
    while (v > 1) {
        v >>= 1;
        ++n;
    }
    return n;
}
constexpr double kNever = -1e18;
// std::max({a, b, ...}) without the initializer list's loop: the same comparisons in the same
// order (the first of equals wins), so the same value to the bit.
inline double max_of(double a, double b) { return a < b ? b : a; }
template <class... More> inline double max_of(double a, double b, More... more) {
    return max_of(max_of(a, b), more...);
}
} // namespace

namespace {
// c rounded to a whole number of ulps of the binade with biased exponent ex (of a positive x): the
// increment every sum of x's chain gets while it stays in that binade (see exact_steps). False
// where there is none: c not positive, a tiny or infinite binade, c exactly halfway, or under
// half an ulp.
bool rounded_step(uint64_t ex, double c, double& step) {
    if (!(c > 0) || ex <= 53 || ex >= 2047)  // also NaN; ulp or 1/ulp not a normal double
        return false;
    // x is a whole number of ulps u = 2^(ex - 1075). While the chain stays in x's binade every sum
    // rounds to a multiple of u, and x_k + c rounds to x_k + (c rounded to a multiple of u) —
    // the same for every k unless c sits exactly halfway (then ties-to-even depends on x_k).
    uint64_t ub = (ex - 52) << 52, inv_ub = (2098 - ex) << 52;
    double u, inv_u;
    std::memcpy(&u, &ub, sizeof u);
    std::memcpy(&inv_u, &inv_ub, sizeof inv_u);
    const double q = c * inv_u;  // c in ulps: exact (a power of two)
    double units = q;
    if (q < 4503599627370496.0) {  // 2^52: q may have a fraction
        const double whole = double(int64_t(q)), frac = q - whole;
        if (frac == 0.5)
            return false;
        units = frac < 0.5 ? whole : whole + 1;
    }
    if (units == 0)
        return false;
    step = units * u;  // exact
    return true;
}
} // namespace

bool exact_steps(double x, double c, uint64_t n, double& step) {
    step = c;
    if (n == 0)
        return true;
    if (!(x > 0))  // also NaN
        return false;
    uint64_t xb;
    std::memcpy(&xb, &x, sizeof xb);
    const uint64_t ex = xb >> 52;  // biased exponent (the sign bit is 0)
    if (!rounded_step(ex, c, step))
        return false;
    // x + n step in x's binade: then n step was exact too (it is below 2^(ex - 1022)), and so is
    // every partial sum; a product or sum that leaves the binade rounds to at least its top.
    const double sum = x + double(n) * step;
    uint64_t sb;
    std::memcpy(&sb, &sum, sizeof sb);
    return sb >> 52 == ex;
}

void ExactStepper::learn(uint64_t ex) {
    ex_ = ex;
    ok_ = rounded_step(ex, c_, step_);
}

DramTiming DramTiming::from(const HbmConfig& c) {
    DramTiming t{};
    t.tck = c.dram_clock.period().ns;
    // Whole cycles, as a controller counts them; the tiny epsilon keeps 14.000000001 from becoming 15 cycles.
    auto cyc = [&](Duration d) { return std::ceil(d.ns / t.tck - 1e-9) * t.tck; };
    t.burst = c.pc_bandwidth.transfer(double(c.access_bytes)).ns;
    t.rcd = cyc(c.t_rcd);
    t.rp = cyc(c.t_rp);
    t.ras = cyc(c.t_ras);
    t.rc = cyc(c.t_rc);
    t.cl = cyc(c.t_cl);
    t.cwl = cyc(c.t_cwl);
    // A column command also holds the data bus for a burst (DRAMsim3: max(burst, tCCD)).
    t.ccd_s = std::max(cyc(c.t_ccd_s), t.burst);
    t.ccd_l = std::max(cyc(c.t_ccd_l), t.burst);
    t.rrd_s = cyc(c.t_rrd_s);
    t.rrd_l = cyc(c.t_rrd_l);
    t.faw = cyc(c.t_faw);
    t.wtr_s = cyc(c.t_wtr_s);
    t.wtr_l = cyc(c.t_wtr_l);
    t.rtw = cyc(c.t_rtw);
    t.wr = cyc(c.t_wr);
    t.rtp = cyc(c.t_rtp);
    t.refi = cyc(c.t_refi);
    t.rfc = cyc(c.t_rfc);
    t.refi_pb = cyc(c.t_refi_pb);
    t.rfc_pb = cyc(c.t_rfc_pb);
    t.front_end = cyc(c.front_end_latency);
    return t;
}

BankMap::BankMap(const HbmConfig& c)
    : access_bytes_(uint32_t(c.access_bytes)), access_shift_(log2u(c.access_bytes)) {
    std::vector<uint32_t> column = parse_bit_list(c.column_bits), bank_group = parse_bit_list(c.bank_group_bits),
                          bank = parse_bit_list(c.bank_bits), row;
    uint64_t used = (uint64_t(c.access_bytes) - 1);
    for (uint32_t b = 0; b < log2u(c.pseudo_channels); ++b)
        used |= uint64_t(1) << (log2u(c.interleave) + b);
    in_row_mask_ = uint64_t(c.access_bytes) - 1;
    for (auto* field : {&column, &bank_group, &bank})
        for (uint32_t b : *field)
            used |= uint64_t(1) << b;
    for (uint32_t b : column)
        in_row_mask_ |= uint64_t(1) << b;
    while (in_row_mask_ >> (log2u(in_row_run_mask_ + 1)) & 1)  // the contiguous low part
        in_row_run_mask_ = in_row_run_mask_ << 1 | 1;
    uint32_t top = log2u(std::max<uint64_t>(c.stack_capacity, 2) - 1) + 1;  // bits an offset can use
    for (uint32_t b = 0; b < std::min<uint32_t>(top, 64); ++b)
        if (!(used >> b & 1))
            row.push_back(b);
    column_ = runs(column);
    bank_group_ = runs(bank_group);
    bank_ = runs(bank);
    row_ = runs(row);
    std::vector<uint32_t> both = bank;
    both.insert(both.end(), bank_group.begin(), bank_group.end());
    const uint32_t lo = both.empty() ? 0 : *std::min_element(both.begin(), both.end()),
                   hi = both.empty() ? 0 : *std::max_element(both.begin(), both.end());
    if (hi - lo < 12) {
        table_shift_ = lo;
        table_mask_ = (uint64_t(1) << (hi - lo + 1)) - 1;
        table_banks_per_group_ = c.banks_per_group;
        bank_table_.resize(table_mask_ + 1);
        for (uint64_t v = 0; v <= table_mask_; ++v) {
            const uint64_t off = v << lo;
            const uint32_t g = uint32_t(gather(off, bank_group_)), flat = g * c.banks_per_group + uint32_t(gather(off, bank_));
            bank_table_[v] = g << 16 | flat;
            if (g > 0xFFFF || flat > 0xFFFF) {  // does not pack (not a geometry check_hbm accepts)
                bank_table_.clear();
                table_banks_per_group_ = kNoTable;
                break;
            }
        }
    }
}

BankMap::Field BankMap::runs(const std::vector<uint32_t>& bits) {
    std::vector<Run> out;
    for (size_t i = 0; i < bits.size(); ++i) {
        if (!out.empty() && bits[i] == bits[i - 1] + 1 && i > 0) {
            out.back().mask = out.back().mask << 1 | 1;
            continue;
        }
        out.push_back({bits[i], uint32_t(i), 1});
    }
    Field f;
    if (out.size() > 0)
        f.r0 = out[0];
    if (out.size() > 1)
        f.r1 = out[1];
    if (out.size() > 2)
        f.more.assign(out.begin() + 2, out.end());
    return f;
}

DramLocation BankMap::locate(uint64_t off) const {
    return {uint32_t(gather(off, bank_group_)), uint32_t(gather(off, bank_)), gather(off, row_),
            uint32_t(gather(off, column_))};
}

PcScheduler::PcScheduler(const HbmConfig& c, const DramTiming& timing)
    : t_(timing), policy_(c.page_policy), refresh_(c.refresh), banks_per_group_(c.banks_per_group),
      read_cap_(c.read_queue), write_cap_(c.write_queue), write_high_(c.write_high), write_low_(c.write_low),
      banks_(size_t(c.bank_groups) * c.banks_per_group), last_act_bg_(c.bank_groups, kNever),
      write_data_end_bg_(c.bank_groups, kNever), ccd_s_steps_(timing.ccd_s), ccd_l_steps_(timing.ccd_l),
      burst_steps_(timing.burst),
      next_refresh_(c.refresh == RefreshMode::PerBank ? timing.refi_pb : timing.refi) {}

void PcScheduler::describe(DramRequest& r, const BankMap& map, uint64_t off) const {
    if (r.segments.capacity() == 0 && !spare_segments_.empty()) {  // reuse a placed request's storage
        r.segments = std::move(spare_segments_.back());
        spare_segments_.pop_back();
    }
    r.segments.clear();
    const uint64_t ab = map.access_bytes(), in_row = map.in_row_mask();
    const uint32_t shift = map.access_shift();
    uint64_t key = ~uint64_t(0);
    uint32_t accesses = 0;
    // Step over whole runs of one row: addresses agreeing above the low in-row bits share a row.
    // A run ends on an access boundary (the run covers the byte-in-access bits), or at the end.
    const uint64_t run_mask = map.in_row_run_mask();
    for (uint64_t a = off & ~(ab - 1), end = off + r.bytes; a < end;) {
        const uint64_t next = std::min(end, (a | run_mask) + 1);
        const uint32_t n = uint32_t((next - a + ab - 1) >> shift);
        accesses += n;
        const uint64_t k = a & ~in_row;
        if (k == key) {
            r.segments.back().accesses += n;
        } else {
            key = k;
            DramSegment seg;
            map.locate_row(a, banks_per_group_, seg.bank, seg.bank_group, seg.row);
            seg.accesses = n;
            r.segments.push_back(seg);
        }
        a = next;
    }
    r.accesses = accesses;
}

void PcScheduler::enqueue(DramRequest&& r) {
    (r.write ? write_used_ : read_used_) += r.accesses;
    (r.write ? writes_ : reads_).push_back(r);
    if (r.segments.capacity() > 0)  // a placed request's storage: the next describe() takes it
        spare_segments_.push_back(std::move(r.segments));
}

void PcScheduler::refresh_until(double now) {
    if (refresh_ == RefreshMode::Off)
        return;
    while (next_refresh_ <= now) {
        bool all = refresh_ == RefreshMode::AllBank;
        size_t first = all ? 0 : next_refresh_bank_ % banks_.size();
        size_t last = all ? banks_.size() : first + 1;
        // REF once the banks are precharged: an open bank closes after its last column command.
        double at = next_refresh_;
        for (size_t b = first; b < last; ++b)
            at = std::max(at, banks_[b].open ? banks_[b].pre_ready + t_.rp : banks_[b].act_ready);
        double end = at + (all ? t_.rfc : t_.rfc_pb);
        for (size_t b = first; b < last; ++b) {
            banks_[b].open = false;
            banks_[b].act_ready = std::max(banks_[b].act_ready, end);
        }
        ++counters_.refreshes;
        ++next_refresh_bank_;
        next_refresh_ += all ? t_.refi : t_.refi_pb;
    }
}

inline double PcScheduler::open_row(const DramSegment& s, double t0) {
    Bank& b = banks_[s.bank];
    if (b.open && b.row == s.row) {
        ++counters_.row_hits;
        return std::max(t0, b.col_ready);
    }
    if (b.open) {  // row conflict: precharge first
        ++counters_.row_conflicts;
        double pre = std::max(t0, b.pre_ready);
        b.act_ready = std::max(b.act_ready, pre + t_.rp);
    } else {
        ++counters_.row_misses;
    }
    double oldest_of_four = last_acts_[act_slot_];
    double act = max_of(t0, b.act_ready, last_act_ + t_.rrd_s, last_act_bg_[s.bank_group] + t_.rrd_l,
                        oldest_of_four + t_.faw);
    last_acts_[act_slot_] = act;
    act_slot_ = (act_slot_ + 1) % last_acts_.size();
    last_act_ = act;
    last_act_bg_[s.bank_group] = act;
    ++counters_.activates;
    b.open = true;
    b.row = s.row;
    b.col_ready = act + t_.rcd;
    b.pre_ready = act + t_.ras;
    b.act_ready = act + t_.rc;
    return b.col_ready;
}

inline bool PcScheduler::hits(const DramRequest& r) const {
    const DramSegment& s = r.segments.front();
    return banks_[s.bank].open && banks_[s.bank].row == s.row;
}

inline double PcScheduler::earliest_start(const DramRequest& r) const {
    const Bank& b = banks_[r.segments.front().bank];
    double bank_ready = b.open ? b.pre_ready + t_.rp : b.act_ready;
    return std::max(r.ready_ns, bank_ready);
}

inline void PcScheduler::place(const DramRequest& r, double t0, Scheduled& out) {
    if (fast_paths_ && two_rows_ && r.segments.size() == 2 && t_.ccd_s < t_.ccd_l &&
        r.segments[0].bank_group != r.segments[1].bank_group)
        place_pair(r, t0, out);
    else
        place_waves(r, t0, out);
}

// After a request's (or wave's) columns: its banks' precharge limits, the turnaround state and
// the column bus as the next one sees them; a closed page shuts its rows.
void PcScheduler::write_back(size_t n, const uint32_t* bank, const uint32_t* bg, const double* last_t, bool write,
                             double last_col, uint32_t last_bg, double data_free) {
    for (size_t i = 0; i < n; ++i) {
        Bank& b = banks_[bank[i]];
        if (write) {
            write_data_end_bg_[bg[i]] = std::max(write_data_end_bg_[bg[i]], last_t[i]);
            write_data_end_any_ = std::max(write_data_end_any_, write_data_end_bg_[bg[i]]);
            b.pre_ready = std::max(b.pre_ready, last_t[i] + t_.wr);
        } else {
            b.pre_ready = std::max(b.pre_ready, last_t[i] + t_.rtp);
        }
    }
    if (!write)
        last_read_cmd_ = last_col;
    last_col_ = last_col;
    last_col_bg_ = last_bg;
    last_col_write_ = write;
    data_free_ = data_free;
    if (policy_ == PagePolicy::Closed)
        for (size_t i = 0; i < n; ++i) {
            Bank& b = banks_[bank[i]];
            b.open = false;
            b.act_ready = std::max(b.act_ready, b.pre_ready + t_.rp);
        }
}

void PcScheduler::place_waves(const DramRequest& r, double t0, Scheduled& out) {
    out.first_data_ns = std::numeric_limits<double>::infinity();
    out.last_data_ns = out.mark_ns = 0;
    out.row_hit = hits(r);
    const bool write = r.write;
    const double latency = write ? t_.cwl : t_.cl;
    // The column-bus state lives in locals while the accesses are placed (this loop is the hot
    // spot of the banked model) and is written back per wave; the arithmetic is the same.
    double last_col = last_col_, data_free = data_free_, busy = counters_.data_busy_ns;
    uint32_t last_bg = last_col_bg_, placed = 0;
    const size_t n_segments = r.segments.size();
    size_t begin = 0;
    while (begin < n_segments) {
        // A wave: consecutive segments in distinct banks; their columns interleave.
        size_t end = begin + 1;
        while (end < n_segments && end - begin < kWaveMax &&
               std::none_of(r.segments.begin() + long(begin), r.segments.begin() + long(end),
                            [&](const DramSegment& s) { return s.bank == r.segments[end].bank; }))
            ++end;
        const size_t n = end - begin;
        // floor[i]: what binds segment i's columns apart from the column bus itself: its row
        // (ACT + tRCD) and the turnaround from the other direction, fixed during one request.
        double floor[kWaveMax], last_t[kWaveMax];
        uint32_t left[kWaveMax], bg[kWaveMax];
        for (size_t i = 0; i < n; ++i) {
            const DramSegment& s = r.segments[begin + i];
            bg[i] = s.bank_group;
            left[i] = s.accesses;
            last_t[i] = kNever;
            floor[i] = open_row(s, t0);
            floor[i] = write ? std::max(floor[i], last_read_cmd_ + t_.rtw)
                             : std::max({floor[i], write_data_end_any_ + t_.wtr_s, write_data_end_bg_[bg[i]] + t_.wtr_l});
        }
        auto commit = [&](size_t i, double t) {
            if (placed == 0 && last_col_ > kNever && last_col_write_ != write)
                ++counters_.turnarounds;
            const double data = t + latency, data_end = data + t_.burst;
            last_t[i] = write ? data_end : t;
            last_col = t;
            last_bg = bg[i];
            data_free = data_end;
            busy += t_.burst;
            if (placed == 0)
                out.first_data_ns = data;
            out.last_data_ns = data_end;  // column times only grow
            if (++placed == r.mark)
                out.mark_ns = data_end;
            --left[i];
        };
        // Until every row is open and past the turnaround, the earliest column wins.
        bool steady = false;
        while (!steady) {
            size_t best = n;
            double best_t = 0;
            for (size_t i = 0; i < n; ++i) {
                if (!left[i])
                    continue;
                double t = std::max({floor[i], last_col + (bg[i] == last_bg ? t_.ccd_l : t_.ccd_s), data_free - latency});
                if (best == n || t < best_t) {
                    best = i;
                    best_t = t;
                }
            }
            if (best == n)
                break;
            commit(best, best_t);
            // Steady once only the column bus binds (it stays so: the bus only moves on).
            steady = fast_paths_ && data_free - latency <= last_col + t_.ccd_s;
            for (size_t i = 0; i < n && steady; ++i)
                steady = !left[i] || floor[i] <= last_col + t_.ccd_s;
        }
        // Then only bank groups decide (the same choice as above, without the arithmetic): the
        // first segment in another bank group than the last column (tCCD_S), else the first left.
        const bool groups_matter = t_.ccd_s < t_.ccd_l;
        if (steady) {
            double t = last_col;
            uint32_t t_bg = last_bg;
            double t_of[kWaveMax];  // command time of each segment's last column here
            bool moved[kWaveMax] = {};
            auto step = [&](size_t i, double ccd) {
                t += ccd;
                t_bg = bg[i];
                t_of[i] = t;
                moved[i] = true;
                --left[i];
                busy += t_.burst;
                if (++placed == r.mark)
                    out.mark_ns = t + latency + t_.burst;
            };
            // The common shapes without the search: two rows in different bank groups alternate
            // (a 2 KiB burst over two bank groups), then what is left of one row streams alone.
            size_t a = n, b = n, rows_left = 0;
            for (size_t i = 0; i < n; ++i)
                if (left[i]) {
                    ++rows_left;
                    (a == n ? a : b) = i;
                }
            if (rows_left == 2 && groups_matter && bg[a] != bg[b]) {
                size_t cur = bg[a] != t_bg ? a : b, other = cur == a ? b : a;
                // The loop below in closed form: n_s columns alternate at tCCD_S (the row that
                // starts gets one more if it is longer), then the longer row's n_l at tCCD_L.
                // Taken only when exact_steps proves the loop's rounded running sums equal the
                // closed form, so the times are the loop's to the bit.
                const uint32_t c0 = left[cur], c1 = left[other];
                const uint32_t n_s = c0 > c1 ? 2 * c1 + 1 : 2 * c0, n_l = c0 + c1 - n_s;
                const size_t tail = c0 > c1 ? cur : other, first_done = tail == cur ? other : cur;
                double d_s, d_l, d_busy;
                if (ccd_s_steps_(t, n_s, d_s) && ccd_l_steps_(t + double(n_s) * d_s, n_l, d_l) &&
                    burst_steps_(busy, n_s + n_l, d_busy)) {
                    const double t_s = t + double(n_s) * d_s;
                    t_of[first_done] = t + double(n_s - 1) * d_s;  // its last column: one before t_s
                    t_of[tail] = t_s + double(n_l) * d_l;
                    moved[cur] = moved[other] = true;
                    left[cur] = left[other] = 0;
                    if (r.mark > placed && r.mark - placed <= n_s + n_l) {
                        const uint32_t k = r.mark - placed;
                        const double tk = k <= n_s ? t + double(k) * d_s : t_s + double(k - n_s) * d_l;
                        out.mark_ns = tk + latency + t_.burst;
                    }
                    placed += n_s + n_l;
                    busy += double(n_s + n_l) * d_busy;
                    t = t_of[tail];
                    t_bg = bg[tail];
                } else {
                    for (;;) {
                        step(cur, t_.ccd_s);
                        if (!left[other])
                            break;
                        std::swap(cur, other);
                    }
                    while (left[cur])
                        step(cur, t_.ccd_l);
                }
            }
            for (;;) {
                size_t pick = n;
                for (size_t i = 0; i < n && groups_matter; ++i)
                    if (left[i] && bg[i] != t_bg) {
                        pick = i;
                        break;
                    }
                for (size_t i = 0; i < n && pick == n; ++i)
                    if (left[i])
                        pick = i;
                if (pick == n)
                    break;
                step(pick, bg[pick] == t_bg ? t_.ccd_l : t_.ccd_s);
            }
            for (size_t i = 0; i < n; ++i)
                if (moved[i])
                    last_t[i] = write ? t_of[i] + latency + t_.burst : t_of[i];
            if (t != last_col) {
                last_col = t;
                last_bg = t_bg;
                data_free = t + latency + t_.burst;
                out.last_data_ns = data_free;
            }
        }
        // Write back what the next wave and the next request see.
        uint32_t bank[kWaveMax];
        for (size_t i = 0; i < n; ++i)
            bank[i] = r.segments[begin + i].bank;
        write_back(n, bank, bg, last_t, write, last_col, last_bg, data_free);
        begin = end;
    }
    (write ? counters_.writes : counters_.reads) += placed;
    counters_.data_busy_ns = busy;
}

// place() for the common shape, a 2 KiB burst: two rows in two bank groups (one wave of two),
// tCCD_S < tCCD_L. The same decisions and the same arithmetic as place_wave with the fast paths,
// on two segments' scalars instead of loops over a wave (the differential tests hold them equal).
void PcScheduler::place_pair(const DramRequest& r, double t0, Scheduled& out) {
    const DramSegment* const seg[2] = {&r.segments[0], &r.segments[1]};
    const bool write = r.write;
    const double latency = write ? t_.cwl : t_.cl, ccd_s = t_.ccd_s, ccd_l = t_.ccd_l, burst = t_.burst;
    out.first_data_ns = std::numeric_limits<double>::infinity();
    out.last_data_ns = out.mark_ns = 0;
    out.row_hit = hits(r);
    double last_col = last_col_, data_free = data_free_, busy = counters_.data_busy_ns;
    uint32_t last_bg = last_col_bg_, placed = 0;
    const uint32_t bg[2] = {seg[0]->bank_group, seg[1]->bank_group};
    uint32_t left[2] = {seg[0]->accesses, seg[1]->accesses};
    double floor[2], last_t[2] = {kNever, kNever};
    for (size_t i = 0; i < 2; ++i) {
        floor[i] = open_row(*seg[i], t0);
        floor[i] = write ? std::max(floor[i], last_read_cmd_ + t_.rtw)
                         : max_of(floor[i], write_data_end_any_ + t_.wtr_s, write_data_end_bg_[bg[i]] + t_.wtr_l);
    }
    // Until both rows are open and past the turnaround, the earliest column wins (the first on ties).
    bool steady = false;
    while (!steady) {
        const double bus = data_free - latency;
        size_t i;
        double t;
        if (left[0] && left[1]) {
            const double c0 = max_of(floor[0], last_col + (bg[0] == last_bg ? ccd_l : ccd_s), bus);
            const double c1 = max_of(floor[1], last_col + (bg[1] == last_bg ? ccd_l : ccd_s), bus);
            i = c1 < c0;
            t = i ? c1 : c0;
        } else if (left[0] || left[1]) {
            i = left[1] != 0;
            t = max_of(floor[i], last_col + (bg[i] == last_bg ? ccd_l : ccd_s), bus);
        } else {
            break;
        }
        if (placed == 0 && last_col_ > kNever && last_col_write_ != write)
            ++counters_.turnarounds;
        const double data = t + latency, data_end = data + burst;
        last_t[i] = write ? data_end : t;
        last_col = t;
        last_bg = bg[i];
        data_free = data_end;
        busy += burst;
        if (placed == 0)
            out.first_data_ns = data;
        out.last_data_ns = data_end;
        if (++placed == r.mark)
            out.mark_ns = data_end;
        --left[i];
        const double limit = last_col + ccd_s;
        steady = data_free - latency <= limit && (!left[0] || floor[0] <= limit) && (!left[1] || floor[1] <= limit);
    }
    if (steady) {
        double t = last_col;
        uint32_t t_bg = last_bg;
        double t_of[2];
        bool moved[2] = {false, false};
        auto step = [&](size_t i, double ccd) {
            t += ccd;
            t_bg = bg[i];
            t_of[i] = t;
            moved[i] = true;
            --left[i];
            busy += burst;
            if (++placed == r.mark)
                out.mark_ns = t + latency + burst;
        };
        if (left[0] && left[1]) {  // alternate, then the longer row alone: in closed form if exact
            size_t cur = bg[0] != t_bg ? 0 : 1, other = 1 - cur;
            const uint32_t c0 = left[cur], c1 = left[other];
            const uint32_t n_s = c0 > c1 ? 2 * c1 + 1 : 2 * c0, n_l = c0 + c1 - n_s;
            const size_t tail = c0 > c1 ? cur : other, first_done = 1 - tail;
            double d_s, d_l, d_busy;
            if (ccd_s_steps_(t, n_s, d_s) && ccd_l_steps_(t + double(n_s) * d_s, n_l, d_l) &&
                burst_steps_(busy, n_s + n_l, d_busy)) {
                const double t_s = t + double(n_s) * d_s;
                t_of[first_done] = t + double(n_s - 1) * d_s;
                t_of[tail] = t_s + double(n_l) * d_l;
                moved[0] = moved[1] = true;
                left[0] = left[1] = 0;
                if (r.mark > placed && r.mark - placed <= n_s + n_l) {
                    const uint32_t k = r.mark - placed;
                    const double tk = k <= n_s ? t + double(k) * d_s : t_s + double(k - n_s) * d_l;
                    out.mark_ns = tk + latency + burst;
                }
                placed += n_s + n_l;
                busy += double(n_s + n_l) * d_busy;
                t = t_of[tail];
                t_bg = bg[tail];
            } else {
                for (;;) {
                    step(cur, ccd_s);
                    if (!left[other])
                        break;
                    std::swap(cur, other);
                }
                while (left[cur])
                    step(cur, ccd_l);
            }
        }
        for (size_t i = 0; i < 2; ++i)  // one row left: it streams alone
            while (left[i])
                step(i, bg[i] == t_bg ? ccd_l : ccd_s);
        for (size_t i = 0; i < 2; ++i)
            if (moved[i])
                last_t[i] = write ? t_of[i] + latency + burst : t_of[i];
        if (t != last_col) {
            last_col = t;
            last_bg = t_bg;
            data_free = t + latency + burst;
            out.last_data_ns = data_free;
        }
    }
    const uint32_t bank[2] = {seg[0]->bank, seg[1]->bank};
    write_back(2, bank, bg, last_t, write, last_col, last_bg, data_free);
    (write ? counters_.writes : counters_.reads) += placed;
    counters_.data_busy_ns = busy;
}

Scheduled PcScheduler::schedule_next(double now) {
    if (next_refresh_ <= now)  // a refresh is due (most decisions: none, no call)
        refresh_until(now);
    if (!draining_ && write_used_ >= write_high_)
        draining_ = true;
    if (draining_ && write_used_ <= write_low_)
        draining_ = false;
    bool use_writes = draining_ ? !writes_.empty() : reads_.empty();
    RequestRing& q = use_writes ? writes_ : reads_;
    // First ready: the oldest row hit; else the request whose bank frees first (oldest on ties).
    const size_t size = q.size();
    size_t pick = size;
    for (size_t i = 0; i < size && pick == size; ++i)
        if (hits(q[i]))
            pick = i;
    if (pick == size) {
        pick = 0;
        double best = earliest_start(q[0]);
        for (size_t i = 1; i < size; ++i)
            if (double t = earliest_start(q[i]); t < best) {
                best = t;
                pick = i;
            }
    }
    DramRequest& r = q[pick];
    (r.write ? write_used_ : read_used_) -= r.accesses;
    Scheduled s{r.tag, r.write, 0, 0, 0, r.bytes, false};
    place(r, std::max(now, r.ready_ns), s);
    if (pick == 0)  // the usual case (first come or first hit): no shifting
        q.pop_front();
    else
        q.erase(pick);
    return s;
}

Scheduled PcScheduler::enqueue_and_schedule(DramRequest& r, double now) {
    if (!empty()) {
        enqueue(DramRequest(r));
        return schedule_next(now);
    }
    // schedule_next with r alone queued: its own entries are all that is in use.
    if (next_refresh_ <= now)  // a refresh is due (most decisions: none, no call)
        refresh_until(now);
    const size_t write_used = r.write ? r.accesses : 0;
    if (!draining_ && write_used >= write_high_)
        draining_ = true;
    if (draining_ && write_used <= write_low_)
        draining_ = false;
    Scheduled s{r.tag, r.write, 0, 0, 0, r.bytes, false};
    place(r, std::max(now, r.ready_ns), s);
    return s;
}

double PcScheduler::next_decision_ns(double now) const {
    double column_free = std::max(last_col_ + t_.ccd_s, data_free_ - t_.cl);
    return std::max(now, column_free - (t_.rp + t_.rcd));
}

} // namespace nctlm
