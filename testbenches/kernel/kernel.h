// kernel: runs a kernel program (docs/kernels.md) - a JSON file, a shipped kernel by name, or what
// `nctlm kernel FILE.py::fn` traced - on the platform's NeuronCores: instance i of the grid on
// tile first_tile + i x core_stride, every instance's instructions generated lazily by the kernel
// lowering (models/kernel) and run by its PE's engines through DMA, NoC and HBM. Reports wall
// time, per-engine busy time and utilization, DMA bytes and descriptors, HBM GB/s, TFLOPS and % of
// peak, instruction counts and the resource that binds; for a library kernel (kernels/NAME.py) its
// closed-form roofline beside them, as a cross-check.
#pragma once

#include "models/analytic/kernel_roofline.h"
#include "models/pe/processing_element.h"
#include "testbenches/kernel/kernel_launch.h"
#include "testbenches/resource_use.h"
#include "testbenches/testbench.h"

#include <deque>
#include <memory>
#include <optional>

namespace nctlm {

struct KernelTestbenchConfig {
    uint32_t first_tile = 0;
    uint32_t core_stride = 1;
    static const FieldList<KernelTestbenchConfig>& fields();
};

class KernelTestbench : public Testbench {
public:
    // The kernel file (JSON), set by the runner from -w before configure().
    void set_program_file(const std::string& path) override { file_ = path; }
    void configure(const ConfigTree& tree) override;
    void build(Platform& platform) override;
    nlohmann::json results() const override;
    std::string summary() const override;
    uint64_t memory_estimate() const override;

private:
    struct Instance {
        uint32_t tile = 0;
        Program program;
        PeRunRecord record;
        bool finished = false;
        std::string pe;
    };

    std::string file_;
    KernelTestbenchConfig tb_;
    std::shared_ptr<kernel::KernelProgram> program_;
    KernelLaunch launch_;
    // A library kernel's closed-form roofline (models/analytic/kernel_roofline.h): a cross-check.
    std::optional<analytic::KernelRoofline> roofline_;
    std::deque<Instance> instances_;
    PeConfig pe_;
    std::string platform_name_;
    double hbm_peak_ = 0;
    MemorySystemNames memory_;
    uint32_t finished_ = 0;
};

} // namespace nctlm
