// gemm: streams `workload.tiles` GEMM tiles (M x K x N) through one NeuronCore's PE: DMA-in,
// fetch, matmuls, PSUM evacuation, write-back, N-buffered. Reports the per-stage time per tile,
// busy time, pipeline efficiency and the analytic model's efficiency for the same shape.
#pragma once

#include "models/pe/gemm_program.h"
#include "models/pe/processing_element.h"
#include "testbenches/testbench.h"

#include <optional>

namespace nctlm {

struct GemmTestbenchConfig {
    uint32_t tile = 0;
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
    GemmTestbenchConfig tb_;
    GemmWorkload w_;
    std::optional<PlatformConfig> platform_;
    std::string pe_name_;  // for its engines' busy-time stats
    Program preload_, main_;
    PeRunRecord record_;
    bool done_ = false;
};

} // namespace nctlm
