// host: end-to-end time of n x n x n matmuls launched from the host through the runtime:
// inputs copied to the device (unless pinned there), kernels submitted at mark_step barriers,
// results copied back. Every kernel runs on the simulated chip: the multi-core GEMM of
// testbenches/gemm (host.kernel_cores NeuronCores, by output rows). Reports each phase (to_device, kernel = submission + device execution,
// to_host), the end-to-end total and how much of the phases overlapped.
#pragma once

#include "models/host/host.h"
#include "models/host/kernel_cost.h"
#include "models/host/pcie_link.h"
#include "models/host/runtime.h"
#include "models/analytic/gemm_blocking.h"
#include "testbenches/gemm/gemm.h"
#include "testbenches/testbench.h"

#include <memory>

namespace nctlm {

struct HostWorkload {
    uint32_t n = 0; // C[n x np] = A[n x n] . B[n x np], np = n rounded up to pad_n when n > pad_n
    uint32_t pad_n = 0;      // pad the output columns to a multiple of this when n exceeds it (0: none)
    uint32_t host_copies = 0; // whole-tensor CPU copies the program makes of each input before to_device
    DType dtype = DType::Fp32;
    bool pinned = false;      // inputs resident on the device: no host->device copy
    bool host_pinned = false; // host buffers page-locked: no staging memcpy
    uint32_t kernels = 0;     // dependent matmuls per batch element: C_k = C_{k-1} . B
    bool barrier = true;      // mark_step after every kernel (false: one fused graph)
    uint32_t batch = 0;       // independent matmuls per graph (one submission, `batch` kernels)
    bool async = true;        // the runtime does not wait for the device between calls
    bool copy_each = false;   // copy every step's results back (else only the last)
    uint32_t padded_n() const { return pad_n == 0 || n <= pad_n ? n : (n + pad_n - 1) / pad_n * pad_n; }
    static const FieldList<HostWorkload>& fields();
};

class HostTestbench : public Testbench {
public:
    void configure(const ConfigTree& tree) override;
    void build(Platform& platform) override;
    nlohmann::json results() const override;
    std::string summary() const override;
    uint64_t memory_estimate() const override;

private:
    void program();
    static std::string plan_kernel(const Platform& p, const MatmulShape& s, analytic::GemmPlan& plan);
    std::vector<GemmCore> kernel_cores_;  // the device kernel's per-core programs (reused per kernel)
    std::string where_n_;
    HostWorkload w_;
    std::unique_ptr<KernelCostModel> kernel_model_;
    std::unique_ptr<Host> host_;
    std::unique_ptr<PcieLink> pcie_;
    std::unique_ptr<Runtime> runtime_;
    double start_ns_ = 0, end_ns_ = -1;
    // The program's tensors. Members, not locals of program(): a run stopped by an error leaves
    // the thread suspended, and SystemC never unwinds it (LeakSanitizer saw the locals leak).
    std::vector<TensorId> a_, b_, c_;
};

} // namespace nctlm
