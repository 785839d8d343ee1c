#include "models/kernel/kernel_layout.h"

#include "models/common/units.h"

#include <fmt/format.h>

namespace nctlm::kernel {

uint64_t BufferLayout::elements() const {
    uint64_t n = 1;
    for (uint64_t d : shape)
        n *= d;
    return n;
}

namespace {
// A size expression's value: an integer in [lo, hi].
uint64_t size_value(const Expr& e, const std::vector<int64_t>& vars, int64_t lo, int64_t hi, const std::string& where,
                    const char* what) {
    int64_t v = 0;
    try {
        v = e.eval(vars.data());
    } catch (const KernelError& err) {
        throw KernelError(where + ": " + err.what());
    }
    if (v < lo || v > hi)
        throw KernelError(fmt::format("{}: {} = {} ({}) is outside {}..{}", where, what, v, e.text(), lo, hi));
    return uint64_t(v);
}
} // namespace

Layout make_layout(const KernelProgram& p, const PeConfig& pe, uint32_t max_grid) {
    Layout l;
    l.vars.assign(size_t(p.slots), 0);
    for (size_t i = 0; i < p.arg_values.size(); ++i)
        l.vars[i] = p.arg_values[i];
    const std::string& f = p.file;
    // Names that vary with the instance or a loop are not allowed in sizes.
    auto constant_sized = [&](const Expr& e, const std::string& where) {
        for (int s = p.pid_slot; s < p.slots; ++s)
            if (e.uses(s))
                throw KernelError(fmt::format("{}: {}: '{}' may use only the kernel's arguments", f, where, e.text()));
    };
    constant_sized(p.grid, "/grid");
    l.grid = uint32_t(size_value(p.grid, l.vars, 1, 1 << 20, f + ": /grid", "grid"));
    if (l.grid > max_grid)
        throw KernelError(fmt::format("{}: /grid: the kernel asks for {} instances but the platform has {} NeuronCores "
                                      "(at this testbench.core_stride)",
                                      f, l.grid, max_grid));
    for (const Tensor& t : p.tensors) {
        TensorLayout tl;
        tl.elem_bytes = t.type.bytes;
        uint64_t n = 1;
        for (size_t d = 0; d < t.shape.size(); ++d) {
            std::string where = fmt::format("{}/shape/{}", t.path, d);
            constant_sized(t.shape[d], where);
            uint64_t dim = size_value(t.shape[d], l.vars, 1, int64_t(1) << 40, f + ": " + where, "a dimension");
            tl.shape.push_back(dim);
            if (__builtin_mul_overflow(n, dim, &n) || n > (uint64_t(1) << 50))
                throw KernelError(fmt::format("{}: {}: tensor '{}' is too large", f, t.path, t.name));
        }
        tl.bytes = n * tl.elem_bytes;
        if (t.has_offset) {
            // Bytes from the start of the stack (or window): the arguments, and pid for a per-instance copy.
            for (int s = p.pid_slot + (t.per_instance ? 1 : 0); s < p.slots; ++s)
                if (t.offset.uses(s))
                    throw KernelError(fmt::format("{}: {}/offset: '{}' may use only the kernel's arguments{}", f, t.path,
                                                  t.offset.text(), t.per_instance ? " and pid" : ""));
            std::vector<int64_t> vars = l.vars;
            for (uint32_t i = 0; i < (t.per_instance ? l.grid : 1); ++i) {
                vars[size_t(p.pid_slot)] = int64_t(i);
                tl.offsets.push_back(
                    size_value(t.offset, vars, 0, int64_t(1) << 50, fmt::format("{}: {}/offset", f, t.path), "offset"));
                if (tl.offsets.back() % tl.elem_bytes)
                    throw KernelError(fmt::format("{}: {}/offset: {} is not a multiple of the {}-byte element", f,
                                                  t.path, tl.offsets.back(), tl.elem_bytes));
            }
        }
        l.tensors.push_back(std::move(tl));
    }
    for (const Buffer& b : p.buffers) {
        BufferLayout bl;
        bl.memory = b.memory;
        bl.elem_bytes = b.type.bytes;
        constant_sized(b.partitions, b.path + "/partitions");
        constant_sized(b.bufs, b.path + "/bufs");
        bl.partitions = uint32_t(size_value(b.partitions, l.vars, 1, 1 << 20, f + ": " + b.path + "/partitions", "partitions"));
        if (bl.partitions > pe.sbuf_partitions)
            throw KernelError(fmt::format("{}: {}/partitions: buffer '{}' spans {} partitions but the {} has {} "
                                          "(pe.sbuf_partitions)",
                                          f, b.path, b.name, bl.partitions, memory_name(b.memory), pe.sbuf_partitions));
        bl.bufs = uint32_t(size_value(b.bufs, l.vars, 1, 1 << 16, f + ": " + b.path + "/bufs", "bufs"));
        uint64_t n = 1;
        for (size_t d = 0; d < b.shape.size(); ++d) {
            std::string where = fmt::format("{}/shape/{}", b.path, d);
            constant_sized(b.shape[d], where);
            uint64_t dim = size_value(b.shape[d], l.vars, 1, int64_t(1) << 30, f + ": " + where, "a dimension");
            bl.shape.push_back(dim);
            if (__builtin_mul_overflow(n, dim, &n) || n > (uint64_t(1) << 30))
                throw KernelError(fmt::format("{}: {}: buffer '{}' is too large for a partition", f, b.path, b.name));
        }
        bl.copy_bytes = n * bl.elem_bytes;
        uint64_t staging = 0;
        uint64_t& used = b.memory == Memory::Sbuf ? l.sbuf_bytes : b.memory == Memory::Psum ? l.psum_bytes : staging;
        if (b.memory == Memory::Psum) {
            // A copy lies inside one bank (a matmul accumulates within a bank): copies start on a
            // bank boundary unless several fit in one bank.
            uint64_t bank = pe.psum_bank_bytes();
            if (bl.copy_bytes > bank)
                throw KernelError(fmt::format("{}: {}: a copy of PSUM buffer '{}' takes {} per partition but a PSUM bank "
                                              "holds {} (pe.psum_partition_bytes / pe.psum_banks): at most {} {} "
                                              "elements per partition",
                                              f, b.path, b.name, format_bytes(bl.copy_bytes), format_bytes(bank),
                                              bank / bl.elem_bytes, b.type.name));
            uint64_t per_bank = bank / bl.copy_bytes;
            uint64_t banks = (bl.bufs + per_bank - 1) / per_bank;
            used = (used + bank - 1) / bank * bank;  // a new buffer starts on a bank
            bl.offset = used;
            bl.bank_bytes = bank;
            bl.per_bank = per_bank;
            used += banks * bank;
        } else {
            bl.offset = used;
            used += bl.copy_bytes * bl.bufs;
        }
        l.buffers.push_back(std::move(bl));
    }
    // Scalar operands given as real expressions of the arguments: defined at these values.
    for (const Instr& in : p.instrs)
        for (const Expr& e : in.numbers)
            try {
                (void)e.eval_real(l.vars.data());
            } catch (const KernelError& err) {
                throw KernelError(fmt::format("{}: {}: {}", f, in.where(), err.what()));
            }
    if (l.sbuf_bytes > pe.sbuf_partition_bytes) {
        std::string list;
        for (size_t i = 0; i < p.buffers.size(); ++i)
            if (l.buffers[i].memory == Memory::Sbuf)
                list += fmt::format("{}{} {} x {}", list.empty() ? "" : ", ", p.buffers[i].name, l.buffers[i].bufs,
                                    format_bytes(l.buffers[i].copy_bytes));
        throw KernelError(fmt::format("{}: /buffers: the SBUF buffers need {} per partition but pe.sbuf_partition_bytes "
                                      "is {} ({})",
                                      f, format_bytes(l.sbuf_bytes), format_bytes(pe.sbuf_partition_bytes), list));
    }
    if (l.psum_bytes > pe.psum_partition_bytes)
        throw KernelError(fmt::format("{}: /buffers: the PSUM buffers need {} per partition ({} banks of {}) but "
                                      "pe.psum_partition_bytes is {} ({} banks)",
                                      f, format_bytes(l.psum_bytes), l.psum_bytes / pe.psum_bank_bytes(),
                                      format_bytes(pe.psum_bank_bytes()), format_bytes(pe.psum_partition_bytes),
                                      pe.psum_banks));
    return l;
}

} // namespace nctlm::kernel
