#include "models/kernel/kernel_walk.h"

#include <fmt/format.h>
#include <map>

namespace nctlm::kernel {

Walker::Walker(const KernelProgram& p, const Layout& l, uint32_t instance)
    : p_(p), l_(l), instance_(instance), vars_(l.vars) {
    vars_[size_t(p.pid_slot)] = int64_t(instance);
    stack_.push_back({&p.body, 0, nullptr, 0, 0, 0, 0});
}

void Walker::fail(const Instr& in, const std::string& msg) const {
    throw KernelError(fmt::format("{}: {} {}: {}", p_.file, op_name(in.op), in.where(), msg));
}

int64_t Walker::eval(const Expr& e, const std::string& path, const char* field) const {
    try {
        return e.eval(vars_.data());
    } catch (const KernelError& err) {
        throw KernelError(fmt::format("{}: {}/{}: {}", p_.file, path, field, err.what()));
    }
}

int64_t Walker::operand_value(const Expr& e, const Instr& in, const char* role) const {
    try {
        return e.eval(vars_.data());
    } catch (const KernelError& err) {
        fail(in, fmt::format("{}: {}", role, err.what()));
    }
}

ChipAccess Walker::chip(const Operand& o, const Instr& in, const char* role) const {
    const Buffer& b = p_.buffers[size_t(o.index)];
    const BufferLayout& bl = l_.buffers[size_t(o.index)];
    if (o.kind != Operand::Kind::Chip)
        fail(in, fmt::format("{} must be an SBUF/PSUM operand", role));
    auto value = [&](const Expr& e) {
        int64_t v = 0;
        return e.quick(vars_.data(), v) ? v : operand_value(e, in, role);
    };
    ChipAccess a;
    a.buffer = o.index;
    a.memory = b.memory;
    int64_t c = value(o.copy) % int64_t(bl.bufs);
    a.copy = uint32_t(c < 0 ? c + bl.bufs : c);
    if (o.p_whole) {
        a.p0 = 0;
        a.np = bl.partitions;
    } else {
        int64_t s = value(o.p_start), n = value(o.p_size);
        if (s < 0 || n < 1 || s + n > int64_t(bl.partitions))
            fail(in, fmt::format("{}: partitions [{}, {}) are outside buffer '{}' ({} partitions)", role, s, s + n,
                                 b.name, bl.partitions));
        a.p0 = uint32_t(s);
        a.np = uint32_t(n);
    }
    // The box's first and last element in the row-major free dimensions.
    uint64_t first = 0, last = 0, elements = 1;
    for (size_t d = 0; d < bl.shape.size(); ++d) {
        int64_t s = 0, n = int64_t(bl.shape[d]);
        if (!o.f_whole) {
            s = value(o.f_start[d]);
            n = value(o.f_size[d]);
            if (s < 0 || n < 1 || s + n > int64_t(bl.shape[d]))
                fail(in, fmt::format("{}: free dimension {} [{}, {}) is outside buffer '{}' (size {})", role, d, s, s + n,
                                     b.name, bl.shape[d]));
        }
        first = first * bl.shape[d] + uint64_t(s);
        last = last * bl.shape[d] + uint64_t(s + n - 1);
        elements *= uint64_t(n);
    }
    uint64_t base = bl.copy_offset(a.copy);
    a.b0 = base + first * bl.elem_bytes;
    a.b1 = base + (last + 1) * bl.elem_bytes;
    a.elements = elements;
    a.elem_bytes = uint32_t(bl.elem_bytes);
    return a;
}

HbmAccess Walker::hbm(const Operand& o, const Instr& in, const char* role) const {
    const Tensor& t = p_.tensors[size_t(o.index)];
    const TensorLayout& tl = l_.tensors[size_t(o.index)];
    auto value = [&](const Expr& e) {
        int64_t v = 0;
        return e.quick(vars_.data(), v) ? v : operand_value(e, in, role);
    };
    if (o.ap.size() > size_t(kMaxApDims))
        fail(in, fmt::format("{}: an access pattern has at most {} dimensions", role, kMaxApDims));
    HbmAccess a;
    a.tensor = o.index;
    a.elem_bytes = uint32_t(tl.elem_bytes);
    int64_t offset = value(o.offset);
    uint64_t numel = tl.bytes / tl.elem_bytes;
    int64_t hi = offset;
    a.elements = 1;
    bool partition_found = false;
    a.dims = int(o.ap.size());
    for (size_t d = 0; d < o.ap.size(); ++d) {
        int64_t stride = value(o.ap[d].first), count = value(o.ap[d].second);
        if (stride < 0 || count < 1)
            fail(in, fmt::format("{}: access pattern dimension {} is [stride {}, count {}]: strides are >= 0 and "
                                 "counts >= 1",
                                 role, d, stride, count));
        a.stride[d] = stride;
        a.count[d] = uint64_t(count);
        if (__builtin_mul_overflow(a.elements, uint64_t(count), &a.elements) ||
            __builtin_add_overflow(hi, stride * (count - 1), &hi))
            fail(in, fmt::format("{}: the access pattern is too large", role));
        if (!partition_found && (count > 1 || d + 1 == o.ap.size())) {
            a.partitions = uint32_t(std::min<int64_t>(count, UINT32_MAX));
            partition_found = true;
        }
    }
    if (offset < 0 || uint64_t(hi) >= numel)
        fail(in, fmt::format("{}: elements {}..{} of tensor '{}' are outside its {} elements", role, offset, hi, t.name,
                             numel));
    a.lo = uint64_t(offset) * tl.elem_bytes;
    a.hi = (uint64_t(hi) + 1) * tl.elem_bytes;
    uint32_t instance = instance_;
    if (o.has_instance) {
        int64_t v = value(o.instance);
        if (v < 0 || v >= int64_t(l_.grid))
            fail(in, fmt::format("{}: instance {} ({}) of tensor '{}' is outside the grid's {} instances", role, v,
                                 o.instance.text(), t.name, l_.grid));
        instance = uint32_t(v);
    }
    a.address = tl.address(instance) + a.lo;
    return a;
}

namespace {
// Whether any trip, start, step or condition inside `nodes` reads `slot`.
bool counts_use(const std::vector<Node>& nodes, int slot) {
    for (const Node& n : nodes) {
        if (n.kind == Node::Kind::Loop &&
            (n.trip.uses(slot) || n.start.uses(slot) || n.step.uses(slot) || counts_use(n.body, slot)))
            return true;
        if (n.kind == Node::Kind::If && (n.cond.uses(slot) || counts_use(n.body, slot) || counts_use(n.orelse, slot)))
            return true;
    }
    return false;
}

struct Counter {
    const KernelProgram& p;
    std::vector<int64_t> vars;
    uint64_t limit;
    int64_t value(const Expr& e, const std::string& where) {
        try {
            return e.eval(vars.data());
        } catch (const KernelError& err) {
            throw KernelError(fmt::format("{}: {}: {}", p.file, where, err.what()));
        }
    }
    uint64_t add(uint64_t a, uint64_t b, const Node& at) {
        if (a + b > limit || a + b < a)
            throw KernelError(fmt::format("{}: {}: the program expands to more than {} instructions", p.file, at.path,
                                          limit));
        return a + b;
    }
    uint64_t count(const std::vector<Node>& nodes) {
        uint64_t n = 0;
        for (const Node& node : nodes) {
            if (node.kind == Node::Kind::Instr) {
                n = add(n, 1, node);
            } else if (node.kind == Node::Kind::If) {
                n = add(n, count(value(node.cond, node.path + "/if") ? node.body : node.orelse), node);
            } else {
                int64_t trip = value(node.trip, node.path + "/trip");
                if (trip <= 0)
                    continue;
                int64_t start = value(node.start, node.path + "/start"), step = value(node.step, node.path + "/step");
                if (!counts_use(node.body, node.slot)) {
                    vars[size_t(node.slot)] = start;
                    uint64_t body = count(node.body);
                    if (body && uint64_t(trip) > (limit - n) / body)
                        throw KernelError(fmt::format("{}: {}: the program expands to more than {} instructions "
                                                      "({} iterations of {})",
                                                      p.file, node.path, limit, trip, body));
                    n += uint64_t(trip) * body;
                    continue;
                }
                for (int64_t t = 0; t < trip; ++t) {
                    vars[size_t(node.slot)] = start + step * t;
                    n = add(n, count(node.body), node);
                }
            }
        }
        return n;
    }
};
} // namespace

uint64_t count_instructions(const KernelProgram& p, const Layout& l, uint32_t instance, uint64_t limit) {
    Counter c{p, l.vars, limit};
    c.vars[size_t(p.pid_slot)] = int64_t(instance);
    return c.count(p.body);
}

namespace {
// Calls `f` on every expression of a program.
template <class F> struct EachExpr {
    F& f;
    void operator()(Expr& e) const { f(e); }
    void operator()(Operand& o) const {
        for (Expr* e : {&o.copy, &o.p_start, &o.p_size, &o.offset, &o.instance, &o.real})
            f(*e);
        for (auto& list : {&o.f_start, &o.f_size})
            for (Expr& e : *list)
                f(e);
        for (auto& [stride, count] : o.ap) {
            f(stride);
            f(count);
        }
    }
    void operator()(std::vector<Node>& nodes) const {
        for (Node& n : nodes) {
            for (Expr* e : {&n.trip, &n.start, &n.step, &n.cond})
                f(*e);
            (*this)(n.body);
            (*this)(n.orelse);
        }
    }
    void operator()(KernelProgram& p) const {
        f(p.grid);
        for (Tensor& t : p.tensors) {
            for (Expr& e : t.shape)
                f(e);
            f(t.offset);
        }
        for (Buffer& b : p.buffers) {
            f(b.partitions);
            f(b.bufs);
            for (Expr& e : b.shape)
                f(e);
        }
        for (Instr& in : p.instrs) {
            (*this)(in.dst);
            for (auto& list : {&in.reads, &in.more_dst})
                for (Operand& o : *list)
                    (*this)(o);
            for (Expr* e : {&in.start, &in.stop, &in.tile})
                f(*e);
            for (Expr& e : in.numbers)
                f(e);
        }
        (*this)(p.body);
    }
};
template <class F> void each_expr(KernelProgram& p, F f) { EachExpr<F>{f}(p); }
} // namespace

KernelProgram fold_instance(const KernelProgram& p, const Layout& l, uint32_t instance) {
    std::vector<int64_t> vars = l.vars;  // the arguments, then pid
    vars[size_t(p.pid_slot)] = int64_t(instance);
    const int known = p.pid_slot + 1;
    KernelProgram f = p;
    each_expr(f, [&](Expr& e) { e = e.fold(vars.data(), known); });
    // Expressions of the same code remember one last value: an instruction's operands often
    // repeat a size (both matmul operands' partitions are the contraction's).
    std::map<std::vector<std::pair<int, int64_t>>, const Expr*> first;
    each_expr(f, [&](Expr& e) {
        auto [it, added] = first.emplace(e.code_key(), &e);
        if (!added)
            e.share_memo(*it->second);
    });
    return f;
}

bool Walker::next(Step& out) {
    while (!stack_.empty()) {
        Frame& f = stack_.back();
        if (f.pos >= f.list->size()) {
            if (f.loop && ++f.t < f.trip) {
                vars_[size_t(f.loop->slot)] = f.start + f.step * f.t;
                f.pos = 0;
                continue;
            }
            stack_.pop_back();
            continue;
        }
        const Node& n = (*f.list)[f.pos++];
        if (n.kind == Node::Kind::Loop) {
            int64_t trip = eval(n.trip, n.path, "trip");
            if (trip > (int64_t(1) << 40))
                throw KernelError(fmt::format("{}: {}/trip: {} iterations ({}) is past the limit of 2^40", p_.file, n.path,
                                              trip, n.trip.text()));
            if (trip <= 0)
                continue;
            int64_t start = eval(n.start, n.path, "start"), step = eval(n.step, n.path, "step");
            int64_t last = 0;
            if (__builtin_mul_overflow(step, trip - 1, &last) || __builtin_add_overflow(start, last, &last))
                throw KernelError(fmt::format("{}: {}: the loop variable overflows", p_.file, n.path));
            vars_[size_t(n.slot)] = start;
            stack_.push_back({&n.body, 0, &n, 0, trip, start, step});
            continue;
        }
        if (n.kind == Node::Kind::If) {
            bool taken = eval(n.cond, n.path, "if") != 0;
            const std::vector<Node>& branch = taken ? n.body : n.orelse;
            if (!branch.empty())
                stack_.push_back({&branch, 0, nullptr, 0, 0, 0, 0});
            continue;
        }
        const Instr& in = p_.instrs[size_t(n.instr)];
        out = Step{};
        out.ins = &in;
        out.index = index_++;
        if (in.has_tile)
            out.tile = eval(in.tile, in.path, "tile");
        if (in.op == KernelOp::Dma) {
            const Operand& src = in.reads[0];
            bool load = src.kind == Operand::Kind::Hbm;
            if (load == (in.dst.kind == Operand::Kind::Hbm))
                fail(in, "a DMA moves between HBM and SBUF: one of dst and src is an HBM tensor, the other a buffer");
            const Operand& chip_side = load ? in.dst : src;
            ChipAccess c = chip(chip_side, in, load ? "dst" : "src");
            out.hbm = hbm(load ? src : in.dst, in, load ? "src" : "dst");
            out.has_hbm = true;
            out.hbm_write = !load;
            if (load) {
                out.dst = c;
                out.has_dst = true;
            } else {
                out.reads[out.n_reads++] = c;
            }
            if (c.memory != Memory::Sbuf)
                fail(in, "a DMA moves between HBM and SBUF, not PSUM");
            // Elements move in order (row-major on both sides); the partition split may differ.
            if (c.bytes() != out.hbm.bytes())
                fail(in, fmt::format("the HBM side moves {} B ({} elements of {} B) but the on-chip side {} B ({} "
                                     "partitions x {} elements of {} B)",
                                     out.hbm.bytes(), out.hbm.elements, out.hbm.elem_bytes, c.bytes(),
                                     c.np, c.elements, p_.buffers[size_t(c.buffer)].type.bytes));
            return true;
        }
        static const char* roles[] = {"in0", "in1", "in2", "in3"};
        for (size_t r = 0; r < in.reads.size(); ++r) {
            const char* role = in.op == KernelOp::Matmul ? (r == 0 ? "stationary" : "moving") : roles[r];
            out.reads[out.n_reads++] = chip(in.reads[r], in, role);
        }
        if (in.dst.present()) {
            out.dst = chip(in.dst, in, "dst");
            out.has_dst = true;
        }
        if (in.more_dst.size() > out.more_dst.size())
            fail(in, "too many destinations");
        for (const Operand& d : in.more_dst)
            out.more_dst[size_t(out.n_more_dst++)] = chip(d, in, "dst");
        if (in.op == KernelOp::Matmul)
            out.accumulate = eval(in.start, in.path, "start") == 0;
        return true;
    }
    return false;
}

} // namespace nctlm::kernel
