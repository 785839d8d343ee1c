// gemm: streams `workload.tiles` GEMM tiles (M x K x N) through one NeuronCore's PE: DMA-in,
// fetch, matmuls, PSUM evacuation, write-back, N-buffered. Reports the per-stage time per tile,
// busy time, pipeline efficiency and the analytic model's efficiency for the same shape.
// With workload.cores set, M x K x N is one whole GEMM over that many cores: the blocked GEMM
// kernel (gemm_kernel.h) with the blocking models/analytic/gemm_blocking.h's search picks.
#pragma once

#include "models/analytic/gemm_blocking.h"
#include "models/pe/gemm_workload.h"
#include "models/pe/instruction.h"
#include "models/pe/processing_element.h"
#include "models/kernel/kernel_lowering.h"
#include "testbenches/resource_use.h"
#include "testbenches/testbench.h"

#include <optional>

namespace nctlm {

// One core's share of a whole GEMM (analytic::GemmPlan): its PE program and, once run, its record.
struct GemmCore {
    uint32_t tile = 0;
    Program program;
    PeRunRecord record;
    std::string pe;  // SystemC name of its PE
    kernel::KernelCounts counts;
};
// One core's DMA rates when `cores` cores run on tiles 0, stride, 2 x stride, ...: the PE's DMA
// issue rate, its DMA engines, or its share of an HBM stack that several of them read.
analytic::GemmRates gemm_rates(const Platform& p, uint32_t cores, uint32_t stride);
// Programs for cores 0, stride, 2 x stride, ...: the blocked GEMM kernel with the plan's blocking,
// each core's A^T columns, its copy of B and its C rows in its local stack. Throws ConfigError
// (prefixed by `where`) when a stack cannot hold them.
std::vector<GemmCore> make_gemm_cores(Platform& p, const analytic::GemmPlan& plan, uint32_t stride,
                                      const std::string& where);
// Runs every core's program at once from the calling SystemC thread; returns when all are done.
void run_gemm_cores(Platform& p, std::vector<GemmCore>& cores);

struct GemmTestbenchConfig {
    uint32_t tile = 0;
    uint32_t core_stride = 1;  // multi-core: the cores used are tiles 0, stride, 2 x stride, ...
    static const FieldList<GemmTestbenchConfig>& fields();
};

class GemmTestbench : public Testbench {
public:
    void configure(const ConfigTree& tree) override;
    void build(Platform& platform) override;
    nlohmann::json results() const override;
    std::string summary() const override;

private:
    void traffic(ProcessingElement& pe);
    void build_multicore(Platform& p);
    nlohmann::json multicore_results() const;
    std::string multicore_summary() const;
    analytic::GemmPlan plan_;
    MemorySystemNames memory_;
    std::vector<GemmCore> cores_;
    uint32_t finished_ = 0;
    std::string where_cores_, where_k_;
    GemmTestbenchConfig tb_;
    GemmWorkload w_;
    std::optional<PlatformConfig> platform_;
    std::string pe_name_;  // for its engines' busy-time stats
    Program preload_, main_;
    PeRunRecord record_;
    bool done_ = false;
};

} // namespace nctlm
