#include "testbenches/kernel/kernel_launch.h"

#include <fmt/format.h>

namespace nctlm {

using kernel::KernelError;

KernelLaunch::KernelLaunch(std::shared_ptr<kernel::KernelProgram> program, const PlatformConfig& pc,
                           uint32_t first_tile, uint32_t core_stride)
    : program_(std::move(program)), pe_(pc.pe), first_tile_(first_tile), core_stride_(core_stride) {
    check(pc, first_tile < pc.platform.tiles ? (pc.platform.tiles - first_tile - 1) / core_stride + 1 : 0);
}

KernelLaunch::KernelLaunch(std::shared_ptr<kernel::KernelProgram> program, const PlatformConfig& pc,
                           std::vector<uint32_t> tiles)
    : tiles_(std::move(tiles)), program_(std::move(program)), pe_(pc.pe) {
    for (uint32_t t : tiles_)
        if (t >= pc.platform.tiles)
            throw ConfigError(fmt::format("{}: tile {} but the platform has {} tiles", program_->file, t, pc.platform.tiles));
    check(pc, uint32_t(tiles_.size()));
    if (layout_->grid != tiles_.size())
        throw ConfigError(fmt::format("{}: the program's grid is {} but it is launched on {} tiles", program_->file,
                                      layout_->grid, tiles_.size()));
}

void KernelLaunch::check(const PlatformConfig& pc, uint32_t max_grid) {
    try {
        layout_ = std::make_shared<kernel::Layout>(kernel::make_layout(*program_, pc.pe, max_grid));
        lowering_.dma_queues = pc.dma.queues;
        lowering_.descriptor_bytes = pc.pe.dma_descriptor_bytes;
        // Every instance's whole program, checked and counted before anything runs; a program that
        // never reads pid is the same on every instance, so one walk does.
        bool same = !kernel::uses_pid(*program_);
        for (uint32_t i = 0; i < layout_->grid; ++i) {
            counts_.push_back(same && i > 0 ? counts_[0] : kernel::check_kernel(*program_, *layout_, i, pc.pe, lowering_));
            // Instances meet at grid barriers: one that reaches fewer would leave the others waiting.
            if (counts_[i].grid_barriers != counts_[0].grid_barriers)
                throw KernelError(fmt::format("{}: instance {} reaches {} grid barrier(s) but instance 0 reaches {}: "
                                              "every instance must reach each barrier",
                                              program_->file, i, counts_[i].grid_barriers, counts_[0].grid_barriers));
        }
    } catch (const KernelError& e) {
        throw ConfigError(e.what());
    }
}

void KernelLaunch::place(const Platform& p) {
    const HbmConfig& h = p.config.hbm;
    const uint64_t align = h.interleave * h.pseudo_channels;
    // Regions: each stack, then the interleaved window (region h.stacks).
    const uint32_t window = h.stacks;
    auto capacity = [&](uint32_t r) { return r == window ? p.address_map.total_bytes() : h.stack_capacity; };
    auto region_name = [&](uint32_t r) {
        return r == window ? std::string("the interleaved window") : fmt::format("HBM stack {}", r);
    };
    auto region_of = [&](size_t t, uint32_t instance) {
        const kernel::Tensor& tensor = program_->tensors[t];
        if (tensor.placement == kernel::Placement::Interleaved)
            return window;
        uint32_t stack = tensor.placement == kernel::Placement::Stack ? tensor.stack : p.local_stack(tile(instance));
        if (stack >= h.stacks)
            throw ConfigError(fmt::format("{}: {}/placement: stack {} but the platform has {} stacks", program_->file,
                                          tensor.path, stack, h.stacks));
        return stack;
    };
    auto set = [&](size_t t, uint32_t instance, uint32_t region, uint64_t offset) {
        kernel::TensorLayout& tl = layout_->tensors[t];
        const kernel::Tensor& tensor = program_->tensors[t];
        if (offset + tl.bytes > capacity(region))
            throw ConfigError(fmt::format("{}: {}: tensor '{}' ({}) at offset {} does not fit {} ({})", program_->file,
                                          tensor.path, tensor.name, format_bytes(tl.bytes), format_bytes(offset),
                                          region_name(region), format_bytes(capacity(region))));
        tl.base[tensor.per_instance ? instance : 0] =
            region == window ? p.address_map.interleaved_base() + offset : p.stack_address(region, offset);
    };
    std::vector<uint64_t> used(h.stacks + 1, 0);
    for (auto& tl : layout_->tensors)
        tl.base.clear();
    for (size_t t = 0; t < program_->tensors.size(); ++t)
        layout_->tensors[t].base.assign(program_->tensors[t].per_instance ? instances() : 1, 0);
    // Explicitly placed tensors first (Tensor::offset), checked against each other.
    struct Fixed {
        uint32_t region;
        uint64_t lo, hi;
        size_t tensor;
        uint32_t instance;
    };
    std::vector<Fixed> fixed;
    for (size_t t = 0; t < program_->tensors.size(); ++t) {
        const kernel::TensorLayout& tl = layout_->tensors[t];
        for (uint32_t i = 0; i < tl.offsets.size(); ++i) {
            Fixed f{region_of(t, i), tl.offsets[i], tl.offsets[i] + tl.bytes, t, i};
            for (const Fixed& o : fixed)
                if (o.region == f.region && o.lo < f.hi && f.lo < o.hi)
                    throw ConfigError(fmt::format(
                        "{}: {}/offset: tensor '{}' (instance {}) at [{}, {}) overlaps tensor '{}' (instance {}) at "
                        "[{}, {}) in {}",
                        program_->file, program_->tensors[t].path, program_->tensors[t].name, i, f.lo, f.hi,
                        program_->tensors[o.tensor].name, o.instance, o.lo, o.hi, region_name(f.region)));
            set(t, i, f.region, f.lo);
            fixed.push_back(f);
            used[f.region] = std::max(used[f.region], (f.hi + align - 1) / align * align);
        }
    }
    // The others one after another behind them, each aligned to a full interleave round.
    auto place_one = [&](size_t t, uint32_t instance) {
        const kernel::Tensor& tensor = program_->tensors[t];
        const kernel::TensorLayout& tl = layout_->tensors[t];
        uint32_t region = region_of(t, instance);
        uint64_t size = (tl.bytes + align - 1) / align * align;
        if (used[region] + size > capacity(region))
            throw ConfigError(fmt::format("{}: {}: tensor '{}' ({}) does not fit {} ({} of {} used by the tensors "
                                          "before it)",
                                          program_->file, tensor.path, tensor.name, format_bytes(tl.bytes),
                                          region_name(region), format_bytes(used[region]),
                                          format_bytes(capacity(region))));
        set(t, instance, region, used[region]);
        used[region] += size;
    };
    for (size_t t = 0; t < program_->tensors.size(); ++t)
        if (!program_->tensors[t].per_instance && layout_->tensors[t].offsets.empty())
            place_one(t, 0);
    for (uint32_t i = 0; i < instances(); ++i)
        for (size_t t = 0; t < program_->tensors.size(); ++t)
            if (program_->tensors[t].per_instance && layout_->tensors[t].offsets.empty())
                place_one(t, i);
}

Program KernelLaunch::pe_program(uint32_t instance) {
    Program p = kernel::make_kernel_program(program_, layout_, instance, pe_, lowering_, counts_.at(instance));
    if (instances() > 1) {
        if (!barrier_)
            barrier_ = std::make_shared<GridBarrier>(instances());
        p.barrier = [b = barrier_] { b->arrive(); };
    }
    return p;
}

void GridBarrier::arrive() {
    uint64_t generation = generation_;
    if (++arrived_ == instances_) {
        arrived_ = 0;
        ++generation_;
        open_.notify(sc_core::SC_ZERO_TIME);
        return;
    }
    while (generation_ == generation)
        sc_core::wait(open_);
}

void KernelLaunch::place_at(const std::vector<std::vector<uint64_t>>& bases) {
    if (bases.size() != program_->tensors.size())
        throw ConfigError(fmt::format("{}: {} tensor addresses for {} tensors", program_->file, bases.size(),
                                      program_->tensors.size()));
    for (size_t t = 0; t < bases.size(); ++t) {
        if (bases[t].size() != 1 && bases[t].size() != instances())
            throw ConfigError(fmt::format("{}: tensor '{}' has {} addresses for {} instances", program_->file,
                                          program_->tensors[t].name, bases[t].size(), instances()));
        layout_->tensors[t].base = bases[t];
    }
}

} // namespace nctlm
