#include "models/kernel/kernel_lowering.h"

#include "models/pe/dma_runs.h"

#include <algorithm>
#include <fmt/format.h>

namespace nctlm::kernel {

namespace {

// Semaphores: one per in-order unit (its index), then one per buffer copy for the loads into it,
// then one per buffer copy for the stores out of it (DMA instructions complete out of order).
constexpr uint32_t kUnitSems = kUnits;

bool in_order(Unit u) { return u != Unit::DmaIn && u != Unit::DmaOut; }

Stage stage_of(KernelOp op, bool store) {
    switch (op) {
    case KernelOp::Dma:
        return store ? Stage::WriteBack : Stage::DmaIn;
    case KernelOp::Fetch:
        return Stage::Fetch;
    case KernelOp::Matmul:
    case KernelOp::Transpose:
        return Stage::Gemm;
    default:
        return Stage::Evacuate;
    }
}

[[noreturn]] void fail(const KernelProgram& p, const Step& s, const std::string& msg) {
    throw KernelError(fmt::format("{}: {} {}: {}", p.file, op_name(s.ins->op), s.ins->where(), msg));
}

uint32_t clamp32(uint64_t v) { return uint32_t(std::min<uint64_t>(v, UINT32_MAX)); }

} // namespace

Lowerer::Lowerer(const KernelProgram& p, const Layout& l, uint32_t instance, [[maybe_unused]] const PeConfig& pe,
                 const LoweringOptions& o, const KernelProgram* origin)
    : p_(p), origin_(origin ? *origin : p), o_(o), walker_(p, l, instance), deps_(l) {
    for (auto& b : l.buffers) {
        copy_base_.push_back(copies_);
        copies_ += b.bufs;
    }
    sems_ = kUnitSems + 2 * copies_;
    issued_.assign(sems_, 0);
}

Unit Lowerer::unit_of(const Step& s) const {
    switch (s.ins->op) {
    case KernelOp::Dma:
        return s.hbm_write ? Unit::DmaOut : Unit::DmaIn;
    case KernelOp::Fetch:
        return Unit::Fetch;
    case KernelOp::Matmul:
    case KernelOp::Transpose:
        return Unit::Tensor;
    case KernelOp::Activation:
        return Unit::Scalar;
    case KernelOp::Barrier:
        return Unit::Sync;
    default:
        return s.ins->engine == Engine::Scalar ? Unit::Scalar : Unit::Vector;
    }
}

void Lowerer::fill(const Step& s, Unit unit, Instruction& out) const {
    const Instr& in = *s.ins;
    out.op = nctlm::Op::DmaRead;
    out.unit = unit;
    out.stage = stage_of(in.op, s.hbm_write);
    out.tile = s.tile >= 0 ? uint32_t(s.tile) : 0;
    out.label = op_name(in.op);
    const std::string& line = origin_.instrs[size_t(&in - p_.instrs.data())].line;
    out.source = line.empty() ? nullptr : line.c_str();
    switch (in.op) {
    case KernelOp::Dma: {
        const ChipAccess& c = s.hbm_write ? s.reads[0] : s.dst;
        out.op = s.hbm_write ? nctlm::Op::DmaWrite : nctlm::Op::DmaRead;
        out.address = s.hbm.address;
        out.bytes = s.hbm.bytes();
        out.pattern.dims = uint32_t(s.hbm.dims);
        out.pattern.elem_bytes = s.hbm.elem_bytes;
        for (int d = 0; d < s.hbm.dims; ++d) {
            out.pattern.stride[d] = s.hbm.stride[size_t(d)];
            out.pattern.count[d] = s.hbm.count[size_t(d)];
        }
        if (dma_run_shape(out).second == 1)
            out.pattern.dims = 0;  // one contiguous run
        out.partitions = c.np;
        out.partition = c.p0;
        out.offset = c.b0;
        out.descriptor_bytes = in.descriptor_bytes;
        out.spread = in.spread;
        out.contiguous = in.prebuilt;
        out.shape[0] = c.np;
        out.shape[1] = clamp32(c.elements);
        break;
    }
    case KernelOp::Matmul: {
        const ChipAccess &st = s.reads[0], &mv = s.reads[1];
        out.op = nctlm::Op::Matmul;
        out.n_stationary = clamp32(st.elements);
        out.n_moving = clamp32(mv.elements);
        out.k_rows = st.np;
        out.dtype = p_.buffers[size_t(st.buffer)].type.dtype;
        out.partitions = s.dst.np;
        out.partition = s.dst.p0;
        out.offset = s.dst.b0;
        out.psum_bytes = s.dst.bytes();
        out.shape[0] = st.np;
        out.shape[1] = out.n_stationary;
        out.shape[2] = out.n_moving;
        break;
    }
    case KernelOp::Transpose: {
        const ChipAccess& src = s.reads[0];
        out.op = nctlm::Op::Matmul;  // against the identity: stationary src (P x F), moving P columns
        out.n_stationary = src.np;
        out.n_moving = clamp32(src.elements);
        out.k_rows = src.np;
        out.dtype = p_.buffers[size_t(src.buffer)].type.dtype;
        out.partitions = s.dst.np;
        out.partition = s.dst.p0;
        out.offset = s.dst.b0;
        out.psum_bytes = s.dst.bytes();
        out.shape[0] = src.np;
        out.shape[1] = clamp32(src.elements);
        break;
    }
    case KernelOp::Fetch: {
        // One SBUF access for every staged operand: their bytes over the widest partition range.
        out.op = nctlm::Op::Fetch;
        out.partition = s.reads[0].p0;
        out.offset = s.reads[0].b0;
        uint32_t end = 0;
        for (int r = 0; r < s.n_reads; ++r) {
            const ChipAccess& a = s.reads[size_t(r)];
            out.bytes += a.bytes();
            out.partition = std::min(out.partition, a.p0);
            end = std::max(end, a.p0 + a.np);
        }
        out.partitions = end - out.partition;
        out.shape[0] = out.partitions;
        out.shape[1] = clamp32(out.bytes / std::max(1u, out.partitions));
        break;
    }
    case KernelOp::Barrier:
        out.op = nctlm::Op::Barrier;
        break;
    default: {
        // Vector or scalar engine: the work is the destination's elements per partition (the
        // source's for a reduction); full-size operands count as inputs, per-partition scalars not.
        out.op = unit == Unit::Scalar ? nctlm::Op::Activation : nctlm::Op::VectorOp;
        uint64_t n = in.op == KernelOp::TensorReduce || in.op == KernelOp::Activation ? s.reads[0].elements : s.dst.elements;
        uint32_t inputs = 0, parts = s.dst.np;
        bool sbuf_read = false;
        for (int r = 0; r < s.n_reads; ++r) {
            const ChipAccess& a = s.reads[size_t(r)];
            inputs += a.elements == n && a.elements > 1 ? 1 : 0;
            parts = std::max(parts, a.np);
            if (a.memory == Memory::Psum) {
                out.psum_bytes += a.bytes();
            } else {
                out.sbuf_read_bytes += a.bytes();
                if (!sbuf_read)
                    out.read_offset = a.b0;
                sbuf_read = true;
            }
        }
        out.n_free = clamp32(n);
        out.inputs = in.op == KernelOp::Activation ? 1 : std::max(inputs, in.op == KernelOp::Memset || in.op == KernelOp::Iota ? 0u : 1u);
        out.partitions = parts;
        out.partition = s.dst.p0;
        out.offset = s.dst.b0;
        out.bytes = s.dst.bytes();
        for (int d = 0; d < s.n_more_dst; ++d)
            out.bytes += s.more_dst[size_t(d)].bytes();
        out.write_psum = s.dst.memory == Memory::Psum;
        out.dtype = p_.buffers[size_t(s.dst.buffer)].type.dtype;
        out.shape[0] = parts;
        out.shape[1] = clamp32(n);
    }
    }
}

bool Lowerer::next(Instruction& out, uint64_t& index, const Unit* want) {
    while (walker_.next(step_)) {
        const Instr& in = *step_.ins;
        Unit unit = unit_of(step_);
        if (in.op == KernelOp::Barrier && !in.grid_scope) {
            // Every engine's next instruction waits for everything issued so far.
            barrier_waits_.clear();
            for (uint32_t sem = 0; sem < sems_; ++sem)
                if (issued_[sem])
                    barrier_waits_.push_back({sem, issued_[sem]});
            after_barrier_.fill(true);
            continue;
        }
        uint32_t sem = unit == Unit::DmaIn    ? kUnitSems + copy_index(step_.dst)
                       : unit == Unit::DmaOut ? kUnitSems + copies_ + copy_index(step_.reads[0])
                                              : uint32_t(unit);
        uint64_t ordinal = ++issued_[sem];
        bool mine = !want || *want == unit;
        // "auto" queues rotate over every DMA instruction, loads and stores, whichever unit asks.
        uint32_t queue = 0;
        if (unit == Unit::DmaIn || unit == Unit::DmaOut)
            queue = in.queue >= 0 ? uint32_t(in.queue) % o_.dma_queues : auto_queue_++ % o_.dma_queues;
        std::vector<SemWait>& waits = waits_;  // reused: most steps are another unit's
        waits.clear();
        if (in.op == KernelOp::Barrier) {
            // Grid barrier: the sync unit waits for everything issued so far, meets the other
            // instances, then every engine's next instruction waits for it.
            for (uint32_t k = 0; k < sems_; ++k)
                if (issued_[k] && k != sem)
                    waits.push_back({k, issued_[k]});
            barrier_waits_.assign(1, {sem, ordinal});
            after_barrier_.fill(true);
            after_barrier_[size_t(Unit::Sync)] = false;
        } else {
            deps_.visit(step_, sem, ordinal, in_order(unit), waits);
            if (after_barrier_[size_t(unit)]) {
                after_barrier_[size_t(unit)] = false;
                for (const SemWait& b : barrier_waits_) {
                    auto it = std::find_if(waits.begin(), waits.end(), [&](const SemWait& w) { return w.sem == b.sem; });
                    if (it == waits.end())
                        waits.push_back(b);
                    else
                        it->value = std::max(it->value, b.value);
                }
            }
        }
        if (!mine)
            continue;
        std::vector<SemWait> kept = std::move(out.waits);  // its capacity: no allocation per instruction
        out = Instruction{};
        fill(step_, unit, out);
        kept.assign(waits.begin(), waits.end());
        out.waits = std::move(kept);
        out.signal = int(sem);
        out.signal_ordinal = in_order(unit) ? 0 : ordinal;
        out.queue = queue;
        index = step_.index;
        return true;
    }
    return false;
}

KernelCounts& KernelCounts::operator+=(const KernelCounts& o) {
    for (size_t u = 0; u < per_unit.size(); ++u)
        per_unit[u] += o.per_unit[u];
    for (auto& [op, n] : o.per_op)
        per_op[op] += n;
    instructions += o.instructions;
    flops += o.flops;
    for (auto& [d, f] : o.flops_by_dtype)
        flops_by_dtype[d] += f;
    dma_bytes_in += o.dma_bytes_in;
    dma_bytes_out += o.dma_bytes_out;
    descriptors += o.descriptors;
    tiles = std::max(tiles, o.tiles);
    semaphores = std::max(semaphores, o.semaphores);
    return *this;
}

std::string semaphore_name(const KernelProgram& p, const Layout& l, uint32_t sem) {
    if (sem < kUnitSems)
        return fmt::format("the {} engine's completions", unit_name(Unit(sem)));
    uint32_t k = sem - kUnitSems, copies = 0;
    for (auto& b : l.buffers)
        copies += b.bufs;
    bool store = k >= copies;
    k %= copies;
    for (size_t b = 0; b < l.buffers.size(); ++b) {
        if (k < l.buffers[b].bufs)
            return fmt::format("the {} buffer '{}' copy {}", store ? "stores from" : "loads into", p.buffers[b].name, k);
        k -= l.buffers[b].bufs;
    }
    return fmt::format("semaphore {}", sem);
}

KernelCounts check_kernel(const KernelProgram& p, const Layout& l, uint32_t instance, const PeConfig& pe,
                          const LoweringOptions& o, uint64_t max_instructions) {
    count_instructions(p, l, instance, max_instructions);
    KernelCounts c;
    Lowerer lower(p, l, instance, pe, o);
    c.semaphores = lower.semaphores();
    std::vector<uint32_t> copy_base;
    uint32_t copies = 0;
    for (auto& b : l.buffers) {
        copy_base.push_back(copies);
        copies += b.bufs;
    }
    std::vector<bool> written(copies, false);
    for (size_t b = 0; b < l.buffers.size(); ++b)
        if (p.buffers[b].resident)
            for (uint32_t c = 0; c < l.buffers[b].bufs; ++c)
                written[copy_base[b] + c] = true;
    Instruction ins;
    uint64_t index = 0;
    while (lower.next(ins, index)) {
        const Step& s = lower.step();
        const Instr& in = *s.ins;
        for (int r = 0; r < s.n_reads; ++r) {
            const ChipAccess& a = s.reads[size_t(r)];
            if (!written[copy_base[size_t(a.buffer)] + a.copy])
                fail(p, s, fmt::format("reads {} buffer '{}' (copy {}) before anything wrote it", memory_name(a.memory),
                                       p.buffers[size_t(a.buffer)].name, a.copy));
        }
        if (s.accumulate && !written[copy_base[size_t(s.dst.buffer)] + s.dst.copy])
            fail(p, s, fmt::format("accumulates (start = 0) into PSUM buffer '{}' (copy {}) before a matmul with start = 1 "
                                   "wrote it",
                                   p.buffers[size_t(s.dst.buffer)].name, s.dst.copy));
        auto mark = [&](const ChipAccess& a) { written[copy_base[size_t(a.buffer)] + a.copy] = true; };
        if (s.has_dst)
            mark(s.dst);
        for (int d = 0; d < s.n_more_dst; ++d)
            mark(s.more_dst[size_t(d)]);
        // Shapes the engines take.
        switch (in.op) {
        case KernelOp::Matmul: {
            const ChipAccess &st = s.reads[0], &mv = s.reads[1];
            const ElemType &ts = p.buffers[size_t(st.buffer)].type, &tm = p.buffers[size_t(mv.buffer)].type;
            if (st.memory == Memory::Psum || mv.memory == Memory::Psum)
                fail(p, s, "stationary and moving are read from SBUF (or a staging buffer a fetch filled)");
            if (s.dst.memory != Memory::Psum)
                fail(p, s, "a matmul writes PSUM");
            if (ts.name != tm.name)
                fail(p, s, fmt::format("stationary is {} but moving is {}: a matmul takes one dtype", ts.name, tm.name));
            if (ts.integer)
                fail(p, s, "the tensor engine multiplies floating-point types, not " + ts.name);
            if (st.np != mv.np)
                fail(p, s, fmt::format("stationary contracts over {} partitions but moving over {}", st.np, mv.np));
            if (st.np > pe.tensor_rows || st.elements > pe.tensor_cols || mv.elements > pe.moving_max)
                fail(p, s, fmt::format("stationary {}x{} and moving {}x{} exceed the array (K <= {}, M <= {}, N <= {}: "
                                       "pe.tensor_rows, pe.tensor_cols, pe.moving_max)",
                                       st.np, st.elements, mv.np, mv.elements, pe.tensor_rows, pe.tensor_cols,
                                       pe.moving_max));
            if (s.dst.np != st.elements || s.dst.elements != mv.elements)
                fail(p, s, fmt::format("the result is {} partitions x {} but dst is {} x {}", st.elements, mv.elements,
                                       s.dst.np, s.dst.elements));
            double f = 2.0 * st.np * double(st.elements) * double(mv.elements);
            c.flops += f;
            c.flops_by_dtype[ts.name] += f;
            break;
        }
        case KernelOp::Transpose: {
            const ChipAccess& src = s.reads[0];
            if (src.memory != Memory::Sbuf || s.dst.memory != Memory::Psum)
                fail(p, s, "a transpose reads SBUF and writes PSUM");
            if (src.np > pe.tensor_rows || src.elements > pe.tensor_cols)
                fail(p, s, fmt::format("a {}x{} source exceeds the array ({} x {})", src.np, src.elements,
                                       pe.tensor_rows, pe.tensor_cols));
            if (s.dst.np != src.elements || s.dst.elements != src.np)
                fail(p, s, fmt::format("the transpose of {} partitions x {} is {} x {}, but dst is {} x {}", src.np,
                                       src.elements, src.elements, src.np, s.dst.np, s.dst.elements));
            break;
        }
        case KernelOp::Fetch:
            for (int r = 0; r < s.n_reads; ++r) {
                const ChipAccess& src = s.reads[size_t(r)];
                const ChipAccess& dst = r == 0 ? s.dst : s.more_dst[size_t(r - 1)];
                if (src.memory != Memory::Sbuf || dst.memory != Memory::Staging)
                    fail(p, s, "a fetch reads SBUF into a staging buffer");
                if (src.bytes() != dst.bytes())
                    fail(p, s, fmt::format("operand {} moves {} B from SBUF into a {} B staging box", r, src.bytes(),
                                           dst.bytes()));
            }
            break;
        case KernelOp::Dma:
            (s.hbm_write ? c.dma_bytes_out : c.dma_bytes_in) += s.hbm.bytes();
            c.descriptors += dma_descriptor_count(ins, in.descriptor_bytes ? in.descriptor_bytes : o.descriptor_bytes);
            break;
        case KernelOp::Barrier:
            c.grid_barriers += in.grid_scope ? 1 : 0;
            break;
        default:
            for (int r = 0; r < s.n_reads; ++r)
                if (s.reads[size_t(r)].memory == Memory::Staging)
                    fail(p, s, "staging buffers belong to the tensor engine: fetch fills them, matmul reads them");
            if (s.has_dst && s.dst.memory == Memory::Staging)
                fail(p, s, "staging buffers belong to the tensor engine: fetch fills them, matmul reads them");
            if (s.has_dst) {
                // Operands move lane by lane: the same partitions, and full-size operands the size of the work.
                for (int r = 0; r < s.n_reads; ++r) {
                    const ChipAccess& a = s.reads[size_t(r)];
                    if (a.np != s.dst.np)
                        fail(p, s, fmt::format("operand {} spans {} partitions but dst {}", r, a.np, s.dst.np));
                }
            }
        }
        if (s.tile >= 0)
            c.tiles = std::max<uint64_t>(c.tiles, uint64_t(s.tile) + 1);
        ++c.per_unit[size_t(ins.unit)];
        ++c.per_op[op_name(in.op)];
        ++c.instructions;
    }
    return c;
}

namespace {

// One Lowerer per instance walks the program once for all units: what it lowers for a unit other
// than the caller waits in that unit's queue. A unit that falls more than kMaxLag instructions
// behind (or asks out of turn: a new run of the program) leaves the shared walk and pulls its own
// instructions with a Lowerer of its own over the whole program, so memory stays bounded whatever
// the lead of one unit over another; every Lowerer agrees on every instruction and ordinal.
class KernelSource : public ProgramSource {
public:
    static constexpr size_t kMaxLag = 4096;

    // The units walk a copy of `p` with this instance's arguments and pid folded into its expressions.
    KernelSource(std::shared_ptr<const KernelProgram> p, std::shared_ptr<const Layout> l, uint32_t instance,
                 const PeConfig& pe, const LoweringOptions& o, const KernelCounts& counts)
        : origin_(std::move(p)), folded_(fold_instance(*origin_, *l, instance)), l_(std::move(l)), instance_(instance),
          pe_(pe), o_(o), counts_(counts) {}
    uint64_t count(Unit u) const override { return counts_.per_unit[size_t(u)]; }
    uint64_t at(Unit u, uint64_t k, Instruction& out) const override {
        Cursor& c = cursors_[size_t(u)];
        if (!c.own && k != c.next)
            leave_shared(u);
        uint64_t index = c.own ? own_next(u, k, out) : shared_next(u, out);
        ++c.next;
        return index;
    }

private:
    struct Lowered {
        Instruction ins;
        uint64_t index;
    };
    // Lowered instructions waiting for their unit, first in first out, in slots that are reused
    // (copied into and out of, so their waits keep their capacity: no allocation per instruction).
    class Queue {
    public:
        size_t size() const { return size_; }
        void push(const Lowered& l) {
            if (size_ == slots_.size()) {  // full: grow, the oldest first
                std::rotate(slots_.begin(), slots_.begin() + ptrdiff_t(head_), slots_.end());
                head_ = 0;
                slots_.resize(std::max<size_t>(16, 2 * slots_.size()));
            }
            slots_[(head_ + size_) % slots_.size()] = l;
            ++size_;
        }
        uint64_t pop(Instruction& out) {
            Lowered& l = slots_[head_];
            out = l.ins;
            head_ = (head_ + 1) % slots_.size();
            --size_;
            return l.index;
        }
        void clear() {
            slots_.clear();
            slots_.shrink_to_fit();
            head_ = size_ = 0;
        }

    private:
        std::vector<Lowered> slots_;
        size_t head_ = 0, size_ = 0;
    };
    struct Cursor {
        bool own = false;                // pulls from `lower`, not the shared walk
        std::unique_ptr<Lowerer> lower;  // own: positioned after instruction `next - 1` of the unit
        uint64_t next = 0;               // the unit's next instruction
        Queue queue;                     // shared: lowered, not yet taken
    };

    uint64_t shared_next(Unit u, Instruction& out) const {
        Cursor& c = cursors_[size_t(u)];
        if (c.queue.size() > 0)
            return c.queue.pop(out);
        if (!shared_)
            shared_ = std::make_unique<Lowerer>(folded_, *l_, instance_, pe_, o_, origin_.get());
        Lowered& next = scratch_;
        while (shared_->next(next.ins, next.index)) {
            if (next.ins.unit == u) {
                std::swap(out, next.ins);  // `out`'s buffers come back for the next one
                return next.index;
            }
            const Unit unit = next.ins.unit;
            Cursor& other = cursors_[size_t(unit)];
            if (other.own)
                continue;
            other.queue.push(next);
            if (other.queue.size() > kMaxLag)
                leave_shared(unit);
        }
        throw std::logic_error("kernel program: fewer instructions than counted");
    }
    void leave_shared(Unit u) const {
        Cursor& c = cursors_[size_t(u)];
        c.own = true;
        c.queue.clear();
    }
    uint64_t own_next(Unit u, uint64_t k, Instruction& out) const {
        Cursor& c = cursors_[size_t(u)];
        if (!c.lower || k != c.next) {  // a new run of the program (or a jump): start over
            c.lower = std::make_unique<Lowerer>(folded_, *l_, instance_, pe_, o_, origin_.get());
            for (c.next = 0; c.next < k; ++c.next) {
                uint64_t index = 0;
                c.lower->next(out, index, &u);
            }
        }
        uint64_t index = 0;
        if (!c.lower->next(out, index, &u))
            throw std::logic_error("kernel program: fewer instructions than counted");
        return index;
    }

    std::shared_ptr<const KernelProgram> origin_;
    KernelProgram folded_;
    std::shared_ptr<const Layout> l_;
    uint32_t instance_;
    PeConfig pe_;
    LoweringOptions o_;
    KernelCounts counts_;
    mutable std::unique_ptr<Lowerer> shared_;
    mutable std::array<Cursor, kUnits> cursors_;
    mutable Lowered scratch_;  // the shared walk's instruction being placed
};

} // namespace

nctlm::Program make_kernel_program(std::shared_ptr<const KernelProgram> p, std::shared_ptr<const Layout> l,
                                   uint32_t instance, const PeConfig& pe, const LoweringOptions& o,
                                   const KernelCounts& counts) {
    nctlm::Program prog;
    prog.semaphores = counts.semaphores;
    prog.tiles = uint32_t(counts.tiles);
    prog.dma_records = false;
    prog.semaphore_name = [p, l](uint32_t sem) { return semaphore_name(*p, *l, sem); };
    prog.source = std::make_shared<KernelSource>(std::move(p), std::move(l), instance, pe, o, counts);
    return prog;
}

} // namespace nctlm::kernel
