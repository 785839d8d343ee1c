// Dependencies of a kernel's instructions from the bytes they touch, as the NKI compiler inserts
// semaphores: read-after-write, write-after-read and write-after-write on overlapping boxes of the
// same buffer copy (or byte ranges of the same HBM tensor). Each instruction signals one counting
// semaphore with an ordinal (its place among that semaphore's signals); a dependency becomes a
// wait for that semaphore to reach the ordinal. Only the largest wait per semaphore is kept, and a
// wait on the instruction's own in-order semaphore is dropped (its engine runs in order anyway).
// State: a few records per buffer copy and tensor, whatever the program's length. Pure C++.
#pragma once

#include "models/kernel/kernel_walk.h"
#include "models/pe/instruction.h"

#include <cstdint>
#include <vector>
#include <utility>

namespace nctlm::kernel {

class DependencyTracker {
public:
    explicit DependencyTracker(const Layout& l);
    // Appends to `waits` what `s` must wait for, then records its accesses as signalled by
    // (sem, ordinal). `in_order`: sem counts the completions of one in-order engine.
    void visit(const Step& s, uint32_t sem, uint64_t ordinal, bool in_order, std::vector<SemWait>& waits);

    // Records kept after merging (tests): at most kMaxRecords per buffer copy or tensor.
    static constexpr size_t kMaxRecords = 48;
    size_t records() const;

private:
    struct Record {
        uint32_t p0, p1;  // partitions [p0, p1)
        uint64_t b0, b1;  // bytes [b0, b1)
        bool write;
        uint32_t sem;
        uint64_t ordinal;
        uint64_t seq;     // when it joined its list (the order waits are found in)
        bool overlaps(const Record& o) const { return p0 < o.p1 && o.p0 < p1 && b0 < o.b1 && o.b0 < b1; }
        bool covers(const Record& o) const { return p0 <= o.p0 && o.p1 <= p1 && b0 <= o.b0 && o.b1 <= b1; }
    };
    // One buffer copy's or tensor's records, writes and reads apart (a read checks only the
    // writes), each in the order they joined; together, by `seq`, they are one list in that order.
    struct List {
        std::vector<Record> writes, reads;
        uint64_t next_seq = 0;
        size_t size() const { return writes.size() + reads.size(); }
    };
    List& records_of(const ChipAccess& a) { return chip_[copy_base_[size_t(a.buffer)] + a.copy]; }
    static Record record(const ChipAccess& a, bool write, uint32_t sem, uint64_t ordinal) {
        return {a.p0, a.p0 + a.np, a.b0, a.b1, write, sem, ordinal, 0};
    }
    static void need(const Record& r, uint32_t sem, bool in_order, std::vector<SemWait>& waits);
    static void check(const List& list, const Record& r, uint32_t sem, bool in_order, std::vector<SemWait>& waits);
    static void add(List& list, Record r);
    static void merge(List& list);

    std::vector<size_t> copy_base_;
    std::vector<List> chip_, tensor_;
    std::vector<std::pair<const ChipAccess*, bool>> chip_scratch_;  // visit(): a step's operands, reused
};

} // namespace nctlm::kernel
