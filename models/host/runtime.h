// A PyTorch/XLA-style device runtime on the host. Ops are appended to a lazy graph; mark_step()
// flushes it as one submission (fixed host cost) and the device runs its kernels in order.
// Tensors resident on the device ("pinned on device") need no host->device copy. With `async`
// the host thread does not wait for the device: a copy to the device returns once its host part
// is done, mark_step returns after the submission, and copies back run on a worker thread, so
// they overlap the next submission/kernel. Without async every call waits for completion.
//
// Call the API from one SystemC thread (the host program); calls consume simulated time.
#pragma once

#include "models/common/stats.h"
#include "models/host/host.h"
#include "models/host/host_config.h"
#include "models/host/kernel_cost.h"
#include "models/host/pcie_link.h"

#include <deque>
#include <systemc>
#include <utility>
#include <functional>
#include <vector>

namespace nctlm {

using TensorId = uint32_t;

class Runtime : public sc_core::sc_module {
public:
    SC_HAS_PROCESS(Runtime);
    Runtime(sc_core::sc_module_name name, const HostConfig& cfg, Host& host, PcieLink& pcie,
            const KernelCostModel& kernels, bool async);

    // A tensor in host memory (pageable or pinned host buffer).
    TensorId host_tensor(uint64_t bytes, bool host_pinned);
    // A tensor already resident in device memory: no copy needed.
    TensorId device_tensor(uint64_t bytes);
    // Copies a host tensor to the device; `host_copies` whole-tensor CPU copies the program makes of
    // it first (a benchmark's clone()) run on the host thread and count as part of the copy.
    void to_device(TensorId t, uint32_t host_copies = 0);
    // Appends C = A . B to the lazy graph; nothing runs until mark_step.
    TensorId matmul(TensorId a, TensorId b, const MatmulShape& shape);
    // Submits the pending graph (no-op when empty).
    void mark_step();
    // Copies a result back into a pageable or pinned host buffer (forces a mark_step if the
    // tensor is still pending, as XLA does).
    void to_host(TensorId t, bool host_pinned = false);
    // Waits until every copy back has finished.
    void synchronize();
    // Runs kernels on a simulated device instead of the cost model: `kernel` blocks the calling
    // SystemC thread for one matmul on the chip. Submitted graphs then run in a device thread, in
    // order, once submitted and once their inputs are on the device. Call before the simulation.
    using DeviceKernel = std::function<void(const MatmulShape&)>;
    void set_device(DeviceKernel kernel) { device_ = std::move(kernel); }

    struct Interval {
        double start_ns, end_ns;
    };
    // What the host program spent, by phase: one interval per copy / per submitted graph
    // (submission start to the graph's last kernel end).
    const std::vector<Interval>& to_device_intervals() const { return h2d_; }
    const std::vector<Interval>& kernel_intervals() const { return graphs_; }
    const std::vector<Interval>& to_host_intervals() const { return d2h_; }
    uint32_t submissions() const { return submissions_; }
    uint32_t kernels_run() const { return kernels_run_; }
    double submission_ns() const { return submission_ns_; }
    double device_busy_ns() const { return device_busy_ns_; }
    bool async() const { return async_; }

private:
    struct Tensor {
        HostBuffer host;
        bool on_device = false;
        bool pending = false;       // produced by an op not yet submitted
        bool queued = false;        // produced by a submitted graph not yet run (simulated device)
        double device_ready_ns = 0; // valid once on_device
    };
    struct Op {
        TensorId a, b, out;
        MatmulShape shape;
    };
    struct Graph {
        double start_ns, submitted_ns;
        std::vector<Op> ops;
    };
    void copy_back_worker();
    void device_worker();
    void wait_on_device(TensorId t);
    void copy_back(TensorId t);
    double ready_at(TensorId t) const;

    HostConfig cfg_;
    Host& host_;
    PcieLink& pcie_;
    const KernelCostModel& kernels_;
    const bool async_;
    std::vector<Tensor> tensors_;
    std::vector<Op> graph_;     // the lazy graph being built
    double device_free_ns_ = 0; // the device runs submitted graphs in order
    std::deque<TensorId> copy_queue_;
    uint32_t copies_pending_ = 0;
    sc_core::sc_event copy_posted_, copy_done_;
    std::vector<Interval> h2d_, graphs_, d2h_;
    DeviceKernel device_;
    std::deque<Graph> device_queue_;
    sc_core::sc_event device_posted_, device_progress_;
    uint32_t submissions_ = 0, kernels_run_ = 0;
    double submission_ns_ = 0, device_busy_ns_ = 0;
    int to_device_track_, submission_track_, kernel_track_, to_host_track_;
};

} // namespace nctlm
