// Expands a kernel program's loops and conditionals in program order, one instruction at a time,
// resolving every operand to the bytes it touches: on chip a box of one buffer copy (partitions x
// a byte range inside each), in HBM an access pattern with its byte range. Out-of-range accesses,
// bad trip counts and expression errors throw KernelError naming the instruction. Memory stays
// the loop nest's depth, whatever the trip counts. Pure C++.
#pragma once

#include "models/kernel/kernel_layout.h"

#include <array>
#include <cstdint>
#include <vector>

namespace nctlm::kernel {

inline constexpr int kMaxApDims = 6;

struct ChipAccess {
    int buffer = -1;
    uint32_t copy = 0;
    uint32_t p0 = 0, np = 0;  // partitions [p0, p0 + np)
    uint64_t b0 = 0, b1 = 0;  // bytes [b0, b1) inside each partition (the copy's place included)
    uint64_t elements = 0;    // per partition
    Memory memory = Memory::Sbuf;
    uint32_t elem_bytes = 0;
    uint64_t bytes() const { return elements * np * elem_bytes; }
};

struct HbmAccess {
    int tensor = -1;
    uint64_t address = 0;     // of element `offset`
    uint32_t elem_bytes = 0;
    int dims = 0;
    std::array<int64_t, kMaxApDims> stride{};  // elements
    std::array<uint64_t, kMaxApDims> count{};
    uint64_t lo = 0, hi = 0;  // bytes [lo, hi) from the tensor's start that the pattern touches
    uint64_t elements = 0;
    uint32_t partitions = 1;  // the partition dimension's count (first dimension with count > 1)
    uint64_t bytes() const { return elements * elem_bytes; }
};

struct Step {
    const Instr* ins = nullptr;
    uint64_t index = 0;       // in program order
    ChipAccess dst;
    bool has_dst = false;
    std::array<ChipAccess, 3> more_dst{};  // fetch: further staged operands; activation: its reduce
    int n_more_dst = 0;
    std::array<ChipAccess, 4> reads{};
    int n_reads = 0;
    HbmAccess hbm;
    bool has_hbm = false, hbm_write = false;  // DMA: the HBM side, and whether it is the destination
    bool accumulate = false;  // matmul with start = 0: reads its destination too
    int64_t tile = -1;
};

// Instructions the program expands to for one instance, without expanding it when the loop nest
// allows (a loop whose body's counts do not depend on its variable counts as trip x body).
// Throws KernelError naming the loop once the count passes `limit`.
uint64_t count_instructions(const KernelProgram& p, const Layout& l, uint32_t instance, uint64_t limit);

// The program with one instance's arguments and `pid` folded into its expressions
// (Expr::fold): walks, counts and lowers exactly as `p` does for that instance, evaluating less.
KernelProgram fold_instance(const KernelProgram& p, const Layout& l, uint32_t instance);

class Walker {
public:
    Walker(const KernelProgram& p, const Layout& l, uint32_t instance);
    bool next(Step& out);  // false at the end of the program

private:
    struct Frame {
        const std::vector<Node>* list;
        size_t pos;
        const Node* loop;  // null: a conditional's branch or the body
        int64_t t, trip, start, step;
    };
    // The error names `path`/`field`, joined only when it is thrown (this runs per instruction).
    int64_t eval(const Expr& e, const std::string& path, const char* field) const;
    // An operand's expression; an error names the instruction and the operand's role.
    int64_t operand_value(const Expr& e, const Instr& in, const char* role) const;
    ChipAccess chip(const Operand& o, const Instr& in, const char* role) const;
    HbmAccess hbm(const Operand& o, const Instr& in, const char* role) const;
    [[noreturn]] void fail(const Instr& in, const std::string& msg) const;

    const KernelProgram& p_;
    const Layout& l_;
    uint32_t instance_;
    std::vector<int64_t> vars_;
    std::vector<Frame> stack_;
    uint64_t index_ = 0;
};

} // namespace nctlm::kernel
