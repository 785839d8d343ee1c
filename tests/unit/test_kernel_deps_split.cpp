// DependencyTracker keeps a list's writes and reads apart (a read checks only the writes): held to
// the plain single list it replaced, kept here as the reference, on random operand boxes - the same
// waits in the same order, the same records, through the merges past kMaxRecords.
#include "models/kernel/kernel_deps.h"
#include "tests/xorshift.h"

#include <algorithm>
#include <gtest/gtest.h>

using namespace nctlm;
using namespace nctlm::kernel;

namespace {

// The tracker before the split, verbatim in what it computes.
class PlainTracker {
public:
    explicit PlainTracker(const Layout& l) : tensor_(l.tensors.size()) {
        size_t copies = 0;
        for (auto& b : l.buffers) {
            copy_base_.push_back(copies);
            copies += b.bufs;
        }
        chip_.resize(copies);
    }
    void visit(const Step& s, uint32_t sem, uint64_t ordinal, bool in_order, std::vector<SemWait>& waits) {
        auto check = [&](const std::vector<Record>& list, const Record& r) {
            for (const Record& o : list)
                if ((o.write || r.write) && o.overlaps(r))
                    need(o, sem, in_order, waits);
        };
        std::vector<std::pair<const ChipAccess*, bool>> chip;
        for (int i = 0; i < s.n_reads; ++i)
            chip.push_back({&s.reads[size_t(i)], false});
        if (s.has_dst) {
            if (s.accumulate)
                chip.push_back({&s.dst, false});
            chip.push_back({&s.dst, true});
        }
        for (int d = 0; d < s.n_more_dst; ++d)
            chip.push_back({&s.more_dst[size_t(d)], true});
        for (auto& [a, write] : chip)
            check(records_of(*a), record(*a, write, sem, ordinal));
        Record h{};
        if (s.has_hbm) {
            h = {0, 1, s.hbm.lo, s.hbm.hi, s.hbm_write, sem, ordinal};
            check(tensor_[size_t(s.hbm.tensor)], h);
        }
        for (bool writes : {true, false})
            for (auto& access : chip)
                if (access.second == writes) {
                    const ChipAccess* a = access.first;
                    Record r = record(*a, access.second, sem, ordinal);
                    bool covered = !access.second && std::any_of(chip.begin(), chip.end(), [&](auto& w) {
                        return w.second && w.first->buffer == a->buffer && w.first->copy == a->copy &&
                               record(*w.first, true, sem, ordinal).covers(r);
                    });
                    if (!covered)
                        add(records_of(*a), r);
                }
        if (s.has_hbm)
            add(tensor_[size_t(s.hbm.tensor)], h);
    }
    size_t records() const {
        size_t n = 0;
        for (auto& l : chip_)
            n += l.size();
        for (auto& l : tensor_)
            n += l.size();
        return n;
    }

private:
    struct Record {
        uint32_t p0, p1;
        uint64_t b0, b1;
        bool write;
        uint32_t sem;
        uint64_t ordinal;
        bool overlaps(const Record& o) const { return p0 < o.p1 && o.p0 < p1 && b0 < o.b1 && o.b0 < b1; }
        bool covers(const Record& o) const { return p0 <= o.p0 && o.p1 <= p1 && b0 <= o.b0 && o.b1 <= b1; }
    };
    std::vector<Record>& records_of(const ChipAccess& a) { return chip_[copy_base_[size_t(a.buffer)] + a.copy]; }
    static Record record(const ChipAccess& a, bool write, uint32_t sem, uint64_t ordinal) {
        return {a.p0, a.p0 + a.np, a.b0, a.b1, write, sem, ordinal};
    }
    static void need(const Record& r, uint32_t sem, bool in_order, std::vector<SemWait>& waits) {
        if (r.sem == sem && in_order)
            return;
        for (SemWait& w : waits)
            if (w.sem == r.sem) {
                w.value = std::max(w.value, r.ordinal);
                return;
            }
        waits.push_back({r.sem, r.ordinal});
    }
    static void add(std::vector<Record>& list, const Record& r) {
        if (r.write) {
            list.erase(std::remove_if(list.begin(), list.end(), [&](const Record& o) { return r.covers(o); }),
                       list.end());
        } else {
            for (Record& o : list)
                if (!o.write && o.sem == r.sem && o.p0 == r.p0 && o.p1 == r.p1 && o.b0 == r.b0 && o.b1 == r.b1) {
                    o.ordinal = std::max(o.ordinal, r.ordinal);
                    return;
                }
        }
        list.push_back(r);
        if (list.size() <= DependencyTracker::kMaxRecords)
            return;
        std::vector<Record> merged;
        for (const Record& o : list) {
            auto it = std::find_if(merged.begin(), merged.end(),
                                   [&](const Record& m) { return m.sem == o.sem && m.write == o.write; });
            if (it == merged.end()) {
                merged.push_back(o);
                continue;
            }
            it->p0 = std::min(it->p0, o.p0);
            it->p1 = std::max(it->p1, o.p1);
            it->b0 = std::min(it->b0, o.b0);
            it->b1 = std::max(it->b1, o.b1);
            it->ordinal = std::max(it->ordinal, o.ordinal);
        }
        list = std::move(merged);
    }
    std::vector<size_t> copy_base_;
    std::vector<std::vector<Record>> chip_, tensor_;
};

ChipAccess random_box(test::XorShift64& rng, const Layout& l, bool few_boxes) {
    ChipAccess a;
    a.buffer = int(rng() % l.buffers.size());
    a.copy = uint32_t(rng() % l.buffers[size_t(a.buffer)].bufs);
    // Few distinct boxes: repeats and covers; many: the lists pass kMaxRecords and merge.
    uint64_t grain = few_boxes ? 4 : 200;
    a.p0 = uint32_t(rng() % 8) * 16;
    a.np = rng() % 3 == 0 ? 128 - a.p0 : uint32_t(1 + rng() % ((128 - a.p0) / 16)) * 16;
    a.b0 = (rng() % grain) * 64;
    a.b1 = a.b0 + (1 + rng() % (rng() % 4 == 0 ? grain : 3)) * 64;
    return a;
}

} // namespace

TEST(KernelDeps, SplitListsGiveThePlainListsWaitsInOrderOnRandomOperands) {
    Layout l;
    for (uint32_t bufs : {1u, 2u, 3u}) {
        BufferLayout b;
        b.partitions = 128;
        b.bufs = bufs;
        l.buffers.push_back(b);
    }
    l.tensors.resize(2);
    test::XorShift64 rng{0xdeb5};
    size_t waits_seen = 0, max_records = 0;
    for (int program = 0; program < 40; ++program) {
        bool few = program % 2 == 0;
        DependencyTracker split(l);
        PlainTracker plain(l);
        std::vector<uint64_t> ordinal(12, 0);
        for (int step = 0; step < 3000; ++step) {
            Step s;
            s.n_reads = int(rng() % 3);
            for (int r = 0; r < s.n_reads; ++r)
                s.reads[size_t(r)] = random_box(rng, l, few);
            s.has_dst = rng() % 4 != 0;
            if (s.has_dst) {
                s.dst = random_box(rng, l, few);
                s.accumulate = rng() % 3 == 0;
                if (s.accumulate && s.n_reads < 3 && rng() % 2)  // also read what it writes
                    s.reads[size_t(s.n_reads++)] = s.dst;
            }
            s.n_more_dst = rng() % 5 == 0 ? 1 : 0;
            if (s.n_more_dst)
                s.more_dst[0] = random_box(rng, l, few);
            s.has_hbm = rng() % 3 == 0;
            if (s.has_hbm) {
                s.hbm.tensor = int(rng() % 2);
                s.hbm.lo = (rng() % (few ? 8 : 300)) * 512;
                s.hbm.hi = s.hbm.lo + (1 + rng() % 4) * 512;
                s.hbm_write = rng() % 2;
            }
            uint32_t sem = uint32_t(rng() % ordinal.size());
            bool in_order = sem < 5;
            std::vector<SemWait> want, got;
            plain.visit(s, sem, ++ordinal[sem], in_order, want);
            split.visit(s, sem, ordinal[sem], in_order, got);
            ASSERT_EQ(got.size(), want.size()) << "program " << program << " step " << step;
            for (size_t k = 0; k < want.size(); ++k) {
                ASSERT_EQ(got[k].sem, want[k].sem) << "program " << program << " step " << step << " wait " << k;
                ASSERT_EQ(got[k].value, want[k].value) << "program " << program << " step " << step << " wait " << k;
            }
            ASSERT_EQ(split.records(), plain.records()) << "program " << program << " step " << step;
            waits_seen += want.size();
            max_records = std::max(max_records, plain.records());
        }
    }
    EXPECT_GT(waits_seen, 10000u);
    EXPECT_GT(max_records, 2 * DependencyTracker::kMaxRecords);  // the merges ran
}
