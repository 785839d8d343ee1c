// graph: runs an op graph (docs/models.md) - a model step from `nctlm model` or `nctlm import-onnx`,
// or any graph JSON - on the platform's NeuronCores. The graph is lowered onto kernel programs
// (models/graph), its tensors placed in HBM by the graph (each kernel is given their addresses),
// and every rank runs the schedule's kernels one after another on its core's engines, the ranks of
// a group meeting at the collectives' grid barriers. Reports the step's latency, tokens/s, a per-op
// table (time, share, binding engine, FLOPs, bytes, TFLOPS, GB/s), per-core and per-chip
// utilization, the bytes and utilization of every NeuronLink direction the step used, and the
// collectives' bus bandwidth; with --trace, a track per core with one span per op beside the PE's
// engine tracks and the links' own tracks (one per cable direction, a span per crossing with its bytes).
#pragma once

#include "models/common/stats.h"
#include "models/graph/hbm_plan.h"
#include "testbenches/kernel/kernel_launch.h"
#include "testbenches/testbench.h"

#include <array>
#include <deque>
#include <memory>

namespace nctlm {

struct GraphTestbenchConfig {
    static const FieldList<GraphTestbenchConfig>& fields();
};

class GraphTestbench : public ProgramTestbench {
public:
    void configure(const ConfigTree& tree) override;
    void build(Platform& platform) override;
    nlohmann::json results() const override;
    std::string summary() const override;
    uint64_t memory_estimate() const override;

    // What each rank's engines did during one op (busy ns), and the memory traffic it saw.
    static constexpr int kEngines = 4;  // tensor, vector, scalar, dma issue
    struct OpRecord {
        double start = 0, end = 0;
        std::array<double, kEngines> busy{};
        double hbm_bytes = 0;  // the rank's local stack, read + written (shared with the stack's other cores)
        double dma_bytes = 0;  // the rank's DMA engines
    };

private:
    void refuse_ranks_sharing_a_stack_under_flow(const ConfigTree& tree) const;
    struct Group {  // the ranks of one replica: they meet at the collectives' barriers
        uint32_t size = 0, arrived = 0;
        uint64_t generation = 0;
        sc_core::sc_event open;
    };
    struct Rank {
        uint32_t chip = 0, core = 0, replica = 0, index = 0;  // index: rank within its replica
        std::vector<OpRecord> ops;                 // per lowered op
        bool finished = false;
        std::array<Counter*, kEngines> busy{};
        Counter *hbm_read = nullptr, *hbm_written = nullptr, *dma_read = nullptr, *dma_written = nullptr;
        int track = -1;
    };
    void run_rank(Platform& p, Rank& r);
    void barrier(Group& g);
    size_t critical_rank() const;
    nlohmann::json chip_results(double total_ns) const;
    nlohmann::json link_results(double total_ns) const;

    graph::Graph graph_;
    graph::Lowering lowering_;
    graph::HbmPlan plan_;
    PlatformConfig pc_;
    const Platform* platform_ = nullptr;
    // launches_[p][c][replica]: lowered op p's call c on one replica's ranks.
    std::vector<std::vector<std::vector<KernelLaunch>>> launches_;
    std::deque<Rank> ranks_;
    std::deque<Group> groups_;
    std::vector<uint32_t> rank_stack_;  // chip x stacks + the stack next to the rank's core
    double stack_peak_ = 0, dma_peak_ = 0;  // bytes/ns: one stack, one core's DMA engines
    uint32_t finished_ = 0;
};

} // namespace nctlm
