// Per-partition ports of a partitioned on-chip memory (SBUF, PSUM): each partition moves bytes at
// its own rate, one access at a time; an access over partitions [first, first+count) starts when
// all of them are free. Pure C++, times in ns. Also the PartitionExt that carries the range.
#pragma once

#include "models/pe/instruction.h"

#include <algorithm>
#include <cstdint>
#include <tlm>
#include <vector>

namespace nctlm {

// The partition range of an SBUF/PSUM access; the payload address is the offset inside a
// partition and the data length the total over all partitions.
struct PartitionExt : tlm::tlm_extension<PartitionExt> {
    uint32_t first = 0, count = 1;
    tlm_extension_base* clone() const override { return new PartitionExt(*this); }
    void copy_from(const tlm_extension_base& o) override { *this = static_cast<const PartitionExt&>(o); }
};

class PartitionPorts {
public:
    PartitionPorts(uint32_t partitions, double ns_per_byte)
        : partitions_(partitions), runs_{{0, 0.0}}, ns_per_byte_(ns_per_byte) {}
    // Occupies partitions [first, first+count) for bytes_per_partition from `ready`; returns the end.
    double reserve(double ready, uint32_t first, uint32_t count, double bytes_per_partition) {
        // Runs [i, j) overlap the range: run i holds `first`, run j is the first to start at or past its end.
        if (count == 0) {  // no partition: nothing to wait for or hold
            double end = ready + bytes_per_partition * ns_per_byte_;
            busy_ns_ += end - ready;
            return end;
        }
        const uint32_t last = first + count;
        size_t i = runs_.size() - 1;
        while (runs_[i].first > first)
            --i;
        size_t j = i + 1;
        double start = ready;
        for (; j < runs_.size() && runs_[j].first < last; ++j)
            start = std::max(start, runs_[j].free_at);
        start = std::max(start, runs_[i].free_at);
        double end = start + bytes_per_partition * ns_per_byte_;
        // Replace runs [i, j) by: what run i held before `first`, the range, what run j-1 held past its end.
        const Run before = runs_[i], after = runs_[j - 1];
        const uint32_t after_end = j < runs_.size() ? runs_[j].first : partitions_;
        Run pieces[3];
        int n = 0;
        if (before.first < first)
            pieces[n++] = before;
        pieces[n++] = {first, end};
        if (last < after_end)
            pieces[n++] = {last, after.free_at};
        size_t old = j - i;
        if (size_t(n) > old)
            runs_.insert(runs_.begin() + ptrdiff_t(j), size_t(n) - old, Run{});
        else if (size_t(n) < old)
            runs_.erase(runs_.begin() + ptrdiff_t(i) + n, runs_.begin() + ptrdiff_t(j));
        std::copy(pieces, pieces + n, runs_.begin() + ptrdiff_t(i));
        busy_ns_ += end - start;
        return end;
    }
    uint32_t partitions() const { return partitions_; }
    double busy_ns() const { return busy_ns_; } // time with at least one access in progress (upper bound)
    // Partition p's free time (tests).
    double free_at(uint32_t p) const {
        size_t i = runs_.size() - 1;
        while (runs_[i].first > p)
            --i;
        return runs_[i].free_at;
    }

private:
    // Partitions [first, next run's first) are free from free_at: accesses cover ranges of
    // partitions, so a few runs describe all of them (an access is O(runs), not O(partitions)).
    struct Run {
        uint32_t first;
        double free_at;
    };
    uint32_t partitions_;
    std::vector<Run> runs_;
    double ns_per_byte_;
    double busy_ns_ = 0;
};

// One blocking SBUF/PSUM access at a time from an engine thread, on a reused payload.
class PartitionAccess {
public:
    PartitionAccess() { p_.set_extension(&range_); }
    ~PartitionAccess() { p_.clear_extension(&range_); }
    PartitionAccess(const PartitionAccess&) = delete;
    PartitionAccess& operator=(const PartitionAccess&) = delete;
    // Returns the delay until the access is done; a bad range is a TLM address error.
    template <class Socket>
    sc_core::sc_time run(Socket& socket, bool write, uint32_t first, uint32_t count, uint64_t offset,
                         uint64_t bytes) {
        p_.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
        p_.set_address(offset);
        // Timing-only: a valid pointer all the same (IEEE 1666-2011 14.11), to a scratch buffer
        // that b_transport may touch and nobody reads. Blocking, so growing it between calls is safe.
        static std::vector<unsigned char> scratch;
        if (scratch.size() < std::max<uint64_t>(bytes, 1))
            scratch.resize(std::max<uint64_t>(bytes, 1));
        p_.set_data_ptr(scratch.data());
        p_.set_data_length(uint32_t(bytes));
        p_.set_streaming_width(uint32_t(bytes));
        p_.set_byte_enable_ptr(nullptr);
        p_.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
        range_.first = first;
        range_.count = count;
        sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
        socket->b_transport(p_, delay);
        ok_ = p_.is_response_ok();
        return delay;
    }
    bool ok() const { return ok_; }

private:
    tlm::tlm_generic_payload p_;
    PartitionExt range_;
    bool ok_ = true;
};

// The operand traffic of an engine op that reads PSUM and/or SBUF and writes SBUF or PSUM (vector
// ops, activations): each access overlaps the op, which lasts as long as the longest of them.
struct OperandAccesses {
    PartitionAccess psum_read, sbuf_read, write;
    // Returns the op's duration (at least `op`); `ok` false if an access was refused.
    template <class Socket>
    sc_core::sc_time run(Socket& psum, Socket& sbuf, sc_core::sc_time op, const Instruction& ins, bool& ok) {
        ok = true;
        if (ins.psum_bytes > 0) {
            op = std::max(op, psum_read.run(psum, false, ins.partition, ins.partitions, 0, ins.psum_bytes));
            ok = ok && psum_read.ok();
        }
        if (ins.sbuf_read_bytes > 0) {
            op = std::max(op, sbuf_read.run(sbuf, false, ins.partition, ins.partitions, ins.read_offset,
                                            ins.sbuf_read_bytes));
            ok = ok && sbuf_read.ok();
        }
        if (ins.bytes > 0) {
            op = std::max(op, write.run(ins.write_psum ? psum : sbuf, true, ins.partition, ins.partitions, ins.offset,
                                        ins.bytes));
            ok = ok && write.ok();
        }
        return op;
    }
};

} // namespace nctlm
