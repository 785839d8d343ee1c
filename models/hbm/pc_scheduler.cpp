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
} // namespace

bool exact_steps(double x, double c, uint64_t n, double& step) {
    step = c;
    if (n == 0)
        return true;
    if (!(x > 0 && c > 0))  // also NaN
        return false;
    uint64_t xb;
    std::memcpy(&xb, &x, sizeof xb);
    const int ex = int(xb >> 52);  // biased exponent (the sign bit is 0)
    if (ex <= 53 || ex == 2047)    // tiny (ulp or 1/ulp not a normal double), infinite
        return false;
    // x is a whole number of ulps u = 2^(ex - 1075). While the chain stays in x's binade every sum
    // rounds to a multiple of u, and x_k + c rounds to x_k + (c rounded to a multiple of u) —
    // the same for every k unless c sits exactly halfway (then ties-to-even depends on x_k).
    uint64_t ub = uint64_t(ex - 52) << 52, inv_ub = uint64_t(2098 - ex) << 52;
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
    // x + n step in x's binade: then n step was exact too (it is below 2^(ex - 1022)), and so is
    // every partial sum; a product or sum that leaves the binade rounds to at least its top.
    const double sum = x + double(n) * step;
    uint64_t sb;
    std::memcpy(&sb, &sum, sizeof sb);
    return int(sb >> 52) == ex;
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

BankMap::BankMap(const HbmConfig& c) : access_bytes_(uint32_t(c.access_bytes)) {
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
}

std::vector<BankMap::Run> BankMap::runs(const std::vector<uint32_t>& bits) {
    std::vector<Run> out;
    for (size_t i = 0; i < bits.size(); ++i) {
        if (!out.empty() && bits[i] == bits[i - 1] + 1 && i > 0) {
            out.back().mask = out.back().mask << 1 | 1;
            continue;
        }
        out.push_back({bits[i], uint32_t(i), 1});
    }
    return out;
}

DramLocation BankMap::locate(uint64_t off) const {
    return {uint32_t(gather(off, bank_group_)), uint32_t(gather(off, bank_)), gather(off, row_),
            uint32_t(gather(off, column_))};
}

PcScheduler::PcScheduler(const HbmConfig& c, const DramTiming& timing)
    : t_(timing), policy_(c.page_policy), refresh_(c.refresh), banks_per_group_(c.banks_per_group),
      read_cap_(c.read_queue), write_cap_(c.write_queue), write_high_(c.write_high), write_low_(c.write_low),
      banks_(size_t(c.bank_groups) * c.banks_per_group), last_act_bg_(c.bank_groups, kNever),
      write_data_end_bg_(c.bank_groups, kNever),
      next_refresh_(c.refresh == RefreshMode::PerBank ? timing.refi_pb : timing.refi) {}

void PcScheduler::describe(DramRequest& r, const BankMap& map, uint64_t off) const {
    if (r.segments.capacity() == 0 && !spare_segments_.empty()) {  // reuse a placed request's storage
        r.segments = std::move(spare_segments_.back());
        spare_segments_.pop_back();
    }
    r.segments.clear();
    const uint64_t ab = map.access_bytes();
    uint64_t key = ~uint64_t(0);
    // Step over whole runs of one row: addresses agreeing above the low in-row bits share a row.
    const uint64_t run_mask = map.in_row_run_mask();
    for (uint64_t a = off & ~(ab - 1), end = off + r.bytes; a < end;) {
        uint64_t next = std::min(end, (a | run_mask) + 1);
        uint32_t n = uint32_t((next - a + ab - 1) / ab);
        uint64_t k = a & ~map.in_row_mask();
        if (k == key) {
            r.segments.back().accesses += n;
        } else {
            key = k;
            DramSegment seg;
            map.locate_row(a, banks_per_group_, seg.bank, seg.bank_group, seg.row);
            seg.accesses = n;
            r.segments.push_back(seg);
        }
        a = (next + ab - 1) & ~(ab - 1);
    }
    r.accesses = 0;
    for (const DramSegment& s : r.segments)
        r.accesses += s.accesses;
}

void PcScheduler::enqueue(DramRequest&& r) {
    (r.write ? write_used_ : read_used_) += r.accesses;
    (r.write ? writes_ : reads_).push_back(std::move(r));
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

double PcScheduler::open_row(const DramSegment& s, double t0) {
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
    double act = std::max({t0, b.act_ready, last_act_ + t_.rrd_s, last_act_bg_[s.bank_group] + t_.rrd_l,
                           oldest_of_four + t_.faw});
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

bool PcScheduler::hits(const DramRequest& r) const {
    const DramSegment& s = r.segments.front();
    return banks_[s.bank].open && banks_[s.bank].row == s.row;
}

double PcScheduler::earliest_start(const DramRequest& r) const {
    const Bank& b = banks_[r.segments.front().bank];
    double bank_ready = b.open ? b.pre_ready + t_.rp : b.act_ready;
    return std::max(r.ready_ns, bank_ready);
}

void PcScheduler::place(const DramRequest& r, double t0, Scheduled& out) {
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
        const double write_end_any = *std::max_element(write_data_end_bg_.begin(), write_data_end_bg_.end());
        for (size_t i = 0; i < n; ++i) {
            const DramSegment& s = r.segments[begin + i];
            bg[i] = s.bank_group;
            left[i] = s.accesses;
            last_t[i] = kNever;
            floor[i] = open_row(s, t0);
            floor[i] = write ? std::max(floor[i], last_read_cmd_ + t_.rtw)
                             : std::max({floor[i], write_end_any + t_.wtr_s, write_data_end_bg_[bg[i]] + t_.wtr_l});
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
                if (exact_steps(t, t_.ccd_s, n_s, d_s) && exact_steps(t + double(n_s) * d_s, t_.ccd_l, n_l, d_l) &&
                    exact_steps(busy, t_.burst, n_s + n_l, d_busy)) {
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
        for (size_t i = 0; i < n; ++i) {
            const DramSegment& s = r.segments[begin + i];
            Bank& b = banks_[s.bank];
            if (write) {
                write_data_end_bg_[bg[i]] = std::max(write_data_end_bg_[bg[i]], last_t[i]);
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
            for (size_t i = begin; i < end; ++i) {
                Bank& b = banks_[r.segments[i].bank];
                b.open = false;
                b.act_ready = std::max(b.act_ready, b.pre_ready + t_.rp);
            }
        begin = end;
    }
    (write ? counters_.writes : counters_.reads) += placed;
    counters_.data_busy_ns = busy;
}

Scheduled PcScheduler::schedule_next(double now) {
    refresh_until(now);
    if (!draining_ && write_used_ >= write_high_)
        draining_ = true;
    if (draining_ && write_used_ <= write_low_)
        draining_ = false;
    bool use_writes = draining_ ? !writes_.empty() : reads_.empty();
    std::deque<DramRequest>& q = use_writes ? writes_ : reads_;
    // First ready: the oldest row hit; else the request whose bank frees first (oldest on ties).
    size_t pick = q.size();
    for (size_t i = 0; i < q.size() && pick == q.size(); ++i)
        if (hits(q[i]))
            pick = i;
    if (pick == q.size()) {
        pick = 0;
        double best = earliest_start(q[0]);
        for (size_t i = 1; i < q.size(); ++i)
            if (double t = earliest_start(q[i]); t < best) {
                best = t;
                pick = i;
            }
    }
    DramRequest r = std::move(q[pick]);
    if (pick == 0)  // the usual case (first come or first hit): no shifting
        q.pop_front();
    else
        q.erase(q.begin() + long(pick));
    (r.write ? write_used_ : read_used_) -= r.accesses;
    Scheduled s{r.tag, r.write, 0, 0, 0, r.bytes, false};
    place(r, std::max(now, r.ready_ns), s);
    spare_segments_.push_back(std::move(r.segments));
    return s;
}

double PcScheduler::next_decision_ns(double now) const {
    double column_free = std::max(last_col_ + t_.ccd_s, data_free_ - t_.cl);
    return std::max(now, column_free - (t_.rp + t_.rcd));
}

} // namespace nctlm
