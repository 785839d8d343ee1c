// A kernel program on one NeuronCore's engines: each expanded instruction becomes a PE Instruction
// (models/pe/instruction.h) with its unit, cost fields and semaphore waits, generated lazily as
// the PE's units reach them (ProgramSource), so memory stays bounded whatever the program's length.
// check_kernel() walks the whole program first: every error is found before anything runs, and
// it counts what the report needs. Pure C++.
#pragma once

#include "models/kernel/kernel_deps.h"
#include "models/kernel/kernel_layout.h"
#include "models/pe/instruction.h"
#include "models/pe/pe_config.h"

#include <array>
#include <map>
#include <memory>
#include <string>

namespace nctlm::kernel {

struct LoweringOptions {
    uint32_t dma_queues = 16;           // dma.queues: "auto" queues rotate over them
    uint64_t descriptor_bytes = 32768;  // pe.dma_descriptor_bytes
};

// What one instance's program does, counted by check_kernel().
struct KernelCounts {
    std::array<uint64_t, kUnits> per_unit{};
    std::map<std::string, uint64_t> per_op;  // by kernel op name
    uint64_t instructions = 0;               // PE instructions
    double flops = 0;                        // 2 K M N per matmul (transposes excluded)
    std::map<std::string, double> flops_by_dtype;
    uint64_t dma_bytes_in = 0, dma_bytes_out = 0, descriptors = 0;
    uint64_t tiles = 0;                      // largest "tile" + 1 (0: no tile hints)
    uint32_t semaphores = 0;
    uint64_t grid_barriers = 0;
    KernelCounts& operator+=(const KernelCounts& o);  // sums (tiles and semaphores: the larger)
};

// One instance's instruction stream in program order.
class Lowerer {
public:
    // `origin`: the program `p` was folded from (fold_instance), which outlives the instructions:
    // their `source` strings point into it. Null: into `p`.
    Lowerer(const KernelProgram& p, const Layout& l, uint32_t instance, const PeConfig& pe, const LoweringOptions& o,
            const KernelProgram* origin = nullptr);
    // The next PE instruction in program order; fills `out` completely only when its unit is
    // `want` (or always when `want` is null) - the others still count for dependencies. False at the end.
    bool next(Instruction& out, uint64_t& index, const Unit* want = nullptr);
    const Step& step() const { return step_; }  // the kernel instruction behind the last one
    uint32_t semaphores() const { return sems_; }

private:
    Unit unit_of(const Step& s) const;
    void fill(const Step& s, Unit unit, Instruction& out) const;
    uint32_t copy_index(const ChipAccess& a) const { return copy_base_[size_t(a.buffer)] + a.copy; }

    const KernelProgram& p_;
    const KernelProgram& origin_;
    LoweringOptions o_;
    Walker walker_;
    DependencyTracker deps_;
    Step step_;
    std::vector<uint32_t> copy_base_;
    uint32_t copies_ = 0, sems_ = 0;
    std::vector<uint64_t> issued_;             // per semaphore: signals so far (the last ordinal)
    std::array<bool, kUnits> after_barrier_{};  // the unit's next instruction takes barrier_waits_
    std::vector<SemWait> barrier_waits_;
    std::vector<SemWait> waits_;  // scratch: the waits of the step being lowered
    uint32_t auto_queue_ = 0;
};

// Walks the whole program of one instance: throws KernelError for the first bad instruction
// (naming it), else counts. Also checks that every on-chip read has been written before.
// Expanding more than `max_instructions` is refused before the walk (count_instructions).
KernelCounts check_kernel(const KernelProgram& p, const Layout& l, uint32_t instance, const PeConfig& pe,
                          const LoweringOptions& o, uint64_t max_instructions = uint64_t(1) << 32);

// What semaphore `sem` of a lowered program counts, in words (deadlock reports).
std::string semaphore_name(const KernelProgram& p, const Layout& l, uint32_t sem);

// The PE program of one instance (Program::source), with `counts` from check_kernel().
nctlm::Program make_kernel_program(std::shared_ptr<const KernelProgram> p, std::shared_ptr<const Layout> l, uint32_t instance,
                                   const PeConfig& pe, const LoweringOptions& o, const KernelCounts& counts);

} // namespace nctlm::kernel
