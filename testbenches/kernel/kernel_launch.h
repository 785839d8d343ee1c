// A kernel program prepared for a platform, the one way every workload reaches the engines: its
// arguments bound, its layout and every instance's whole program checked and counted (configure
// time: ConfigError on a bad program), its HBM tensors placed (build time), and each instance's
// lazily generated PE program. Used by the kernel testbench and by the testbenches whose
// workloads are kernels (gemm, host).
#pragma once

#include "models/kernel/kernel_lowering.h"
#include "models/pe/instruction.h"
#include "platforms/platform.h"

#include <memory>
#include <string>
#include <vector>

namespace nctlm {

// A barrier across a launch's instances (Program::barrier, called from the instance's sync unit):
// returns once all `instances` have arrived; reusable, one generation after another.
class GridBarrier {
public:
    explicit GridBarrier(uint32_t instances) : instances_(instances) {}
    void arrive();

private:
    uint32_t instances_, arrived_ = 0;
    uint64_t generation_ = 0;
    sc_core::sc_event open_;
};

class KernelLaunch {
public:
    KernelLaunch() = default;
    // Instance i of the grid runs on tile first_tile + i x core_stride. Throws ConfigError.
    KernelLaunch(std::shared_ptr<kernel::KernelProgram> program, const PlatformConfig& pc, uint32_t first_tile,
                 uint32_t core_stride);
    // Instance i runs on tiles[i]; the program's grid must be tiles.size() (an op graph's ranks).
    KernelLaunch(std::shared_ptr<kernel::KernelProgram> program, const PlatformConfig& pc, std::vector<uint32_t> tiles);
    // HBM addresses given by the caller instead of place() (an op graph owns its tensors' places
    // across kernels): bases[t][i] is tensor t's address for instance i (one entry: every instance's).
    // Throws ConfigError when a tensor or instance is missing.
    void place_at(const std::vector<std::vector<uint64_t>>& bases);
    uint32_t instances() const { return uint32_t(counts_.size()); }
    uint32_t tile(uint32_t instance) const {
        return tiles_.empty() ? first_tile_ + instance * core_stride_ : tiles_.at(instance);
    }
    const kernel::KernelCounts& counts(uint32_t instance) const { return counts_.at(instance); }
    const kernel::KernelProgram& program() const { return *program_; }
    const kernel::Layout& layout() const { return *layout_; }

    // HBM addresses: tensors with an explicit offset there (checked against each other), then the
    // shared tensors, in order, then each instance's own (instance by instance), each aligned to a
    // full interleave round, behind them in their stack (or the interleaved window). Throws
    // ConfigError when a tensor does not fit or explicit ones overlap.
    void place(const Platform& p);
    // Instance i's PE program (generated as its units reach it); place() first. With several
    // instances, its grid barriers meet the other instances' (every program of this launch).
    Program pe_program(uint32_t instance);

private:
    void check(const PlatformConfig& pc, uint32_t max_grid);
    std::vector<uint32_t> tiles_;  // explicit tile per instance (empty: first_tile + i x core_stride)
    std::shared_ptr<kernel::KernelProgram> program_;
    std::shared_ptr<kernel::Layout> layout_;
    kernel::LoweringOptions lowering_;
    PeConfig pe_;
    std::vector<kernel::KernelCounts> counts_;
    uint32_t first_tile_ = 0, core_stride_ = 1;
    std::shared_ptr<GridBarrier> barrier_;
};

} // namespace nctlm
