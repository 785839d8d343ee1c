#include "testbenches/kernel/kernel_launch.h"

#include <fmt/format.h>

namespace nctlm {

using kernel::KernelError;

KernelLaunch::KernelLaunch(std::shared_ptr<kernel::KernelProgram> program, const PlatformConfig& pc,
                           uint32_t first_tile, uint32_t core_stride)
    : program_(std::move(program)), pe_(pc.pe), first_tile_(first_tile), core_stride_(core_stride) {
    try {
        uint32_t max_grid = first_tile < pc.platform.tiles ? (pc.platform.tiles - first_tile - 1) / core_stride + 1 : 0;
        layout_ = std::make_shared<kernel::Layout>(kernel::make_layout(*program_, pc.pe, max_grid));
        lowering_.dma_queues = pc.dma.queues;
        lowering_.descriptor_bytes = pc.pe.dma_descriptor_bytes;
        // Every instance's whole program, checked and counted before anything runs.
        for (uint32_t i = 0; i < layout_->grid; ++i) {
            counts_.push_back(kernel::check_kernel(*program_, *layout_, i, pc.pe, lowering_));
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
    std::vector<uint64_t> used(h.stacks, 0);
    uint64_t interleaved = 0;
    auto place_one = [&](size_t t, uint32_t instance) {
        const kernel::Tensor& tensor = program_->tensors[t];
        kernel::TensorLayout& tl = layout_->tensors[t];
        uint64_t size = (tl.bytes + align - 1) / align * align;
        if (tensor.placement == kernel::Placement::Interleaved) {
            if (interleaved + size > p.address_map.total_bytes())
                throw ConfigError(fmt::format("{}: {}: tensor '{}' ({}) does not fit the interleaved window ({} left)",
                                              program_->file, tensor.path, tensor.name, format_bytes(tl.bytes),
                                              format_bytes(p.address_map.total_bytes() - interleaved)));
            tl.base.push_back(p.address_map.interleaved_base() + interleaved);
            interleaved += size;
            return;
        }
        uint32_t stack = tensor.placement == kernel::Placement::Stack ? tensor.stack : p.local_stack(tile(instance));
        if (stack >= h.stacks)
            throw ConfigError(fmt::format("{}: {}/placement: stack {} but the platform has {} stacks", program_->file,
                                          tensor.path, stack, h.stacks));
        if (used[stack] + size > h.stack_capacity)
            throw ConfigError(fmt::format("{}: {}: tensor '{}' ({}) does not fit HBM stack {} ({} of {} used by the "
                                          "tensors before it)",
                                          program_->file, tensor.path, tensor.name, format_bytes(tl.bytes), stack,
                                          format_bytes(used[stack]), format_bytes(h.stack_capacity)));
        tl.base.push_back(p.stack_address(stack, used[stack]));
        used[stack] += size;
    };
    for (auto& tl : layout_->tensors)
        tl.base.clear();
    for (size_t t = 0; t < program_->tensors.size(); ++t)
        if (!program_->tensors[t].per_instance)
            place_one(t, 0);
    for (uint32_t i = 0; i < instances(); ++i)
        for (size_t t = 0; t < program_->tensors.size(); ++t)
            if (program_->tensors[t].per_instance)
                place_one(t, i);
}

Program KernelLaunch::pe_program(uint32_t instance) const {
    return kernel::make_kernel_program(program_, layout_, instance, pe_, lowering_, counts_.at(instance));
}

} // namespace nctlm
