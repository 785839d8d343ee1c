#include "models/kernel/kernel_deps.h"

#include <algorithm>

namespace nctlm::kernel {

DependencyTracker::DependencyTracker(const Layout& l) : tensor_(l.tensors.size()) {
    size_t copies = 0;
    for (auto& b : l.buffers) {
        copy_base_.push_back(copies);
        copies += b.bufs;
    }
    chip_.resize(copies);
}

void DependencyTracker::need(const Record& r, uint32_t sem, bool in_order, std::vector<SemWait>& waits) {
    if (r.sem == sem && in_order)
        return;
    for (SemWait& w : waits)
        if (w.sem == r.sem) {
            w.value = std::max(w.value, r.ordinal);
            return;
        }
    waits.push_back({r.sem, r.ordinal});
}

void DependencyTracker::check(const List& list, const Record& r, uint32_t sem, bool in_order,
                              std::vector<SemWait>& waits) {
    // Reads wait for overlapping writes; writes for every overlapping access, in the list's order.
    if (!r.write) {
        for (const Record& o : list.writes)
            if (o.overlaps(r))
                need(o, sem, in_order, waits);
        return;
    }
    auto w = list.writes.begin(), rd = list.reads.begin();
    while (w != list.writes.end() || rd != list.reads.end()) {
        const Record& o = rd == list.reads.end() || (w != list.writes.end() && w->seq < rd->seq) ? *w++ : *rd++;
        if (o.overlaps(r))
            need(o, sem, in_order, waits);
    }
}

void DependencyTracker::add(List& list, Record r) {
    if (r.write) {
        // Whoever touches these bytes later waits for this write, which waited for everything
        // before it: records it covers add nothing.
        auto covered = [&](const Record& o) { return r.covers(o); };
        list.writes.erase(std::remove_if(list.writes.begin(), list.writes.end(), covered), list.writes.end());
        list.reads.erase(std::remove_if(list.reads.begin(), list.reads.end(), covered), list.reads.end());
    } else {
        for (Record& o : list.reads)
            if (o.b0 == r.b0 && o.b1 == r.b1 && o.sem == r.sem && o.p0 == r.p0 && o.p1 == r.p1) {
                o.ordinal = std::max(o.ordinal, r.ordinal);
                return;
            }
    }
    r.seq = list.next_seq++;
    (r.write ? list.writes : list.reads).push_back(r);
    if (list.size() > kMaxRecords)
        merge(list);
}

void DependencyTracker::merge(List& list) {
    // Too many distinct boxes: merge the records of each (semaphore, kind) into their bounding box,
    // in the list's order. Safe (a wait is only ever added, never lost), possibly stricter than needed.
    std::vector<Record> all(list.writes);
    all.insert(all.end(), list.reads.begin(), list.reads.end());
    std::sort(all.begin(), all.end(), [](const Record& a, const Record& b) { return a.seq < b.seq; });
    std::vector<Record> merged;
    for (const Record& o : all) {
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
    list.writes.clear();
    list.reads.clear();
    list.next_seq = 0;
    for (Record& m : merged) {
        m.seq = list.next_seq++;
        (m.write ? list.writes : list.reads).push_back(m);
    }
}

void DependencyTracker::visit(const Step& s, uint32_t sem, uint64_t ordinal, bool in_order,
                              std::vector<SemWait>& waits) {
    std::vector<std::pair<const ChipAccess*, bool>>& chip = chip_scratch_;  // (access, write)
    chip.clear();
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
        check(records_of(*a), record(*a, write, sem, ordinal), sem, in_order, waits);
    Record h{};
    if (s.has_hbm) {
        h = {0, 1, s.hbm.lo, s.hbm.hi, s.hbm_write, sem, ordinal, 0};
        check(tensor_[size_t(s.hbm.tensor)], h, sem, in_order, waits);
    }
    // Record after checking every operand: an instruction never waits for itself. Writes first, so
    // a read of bytes this instruction also writes (an accumulating matmul) is covered by the write.
    for (bool writes : {true, false})
        for (auto& access : chip)
            if (access.second == writes) {
                const ChipAccess* a = access.first;
                bool write = access.second;
                List& list = records_of(*a);
                Record r = record(*a, write, sem, ordinal);
                bool covered = !write && std::any_of(chip.begin(), chip.end(), [&](auto& w) {
                    return w.second && w.first->buffer == a->buffer && w.first->copy == a->copy &&
                           record(*w.first, true, sem, ordinal).covers(r);
                });
                if (!covered)
                    add(list, r);
            }
    if (s.has_hbm)
        add(tensor_[size_t(s.hbm.tensor)], h);
}

size_t DependencyTracker::records() const {
    size_t n = 0;
    for (auto& l : chip_)
        n += l.size();
    for (auto& l : tensor_)
        n += l.size();
    return n;
}

} // namespace nctlm::kernel
