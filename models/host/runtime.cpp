#include "models/host/runtime.h"

#include "models/common/errors.h"
#include "models/common/sim.h"
#include "models/common/trace.h"

#include <algorithm>
#include <fmt/format.h>

namespace nctlm {

Runtime::Runtime(sc_core::sc_module_name name, const HostConfig& cfg, Host& host, PcieLink& pcie,
                 const KernelCostModel& kernels, bool async)
    : sc_module(name), cfg_(cfg), host_(host), pcie_(pcie), kernels_(kernels), async_(async),
      to_device_track_(nctlm::trace().track(this->name(), "to_device")),
      submission_track_(nctlm::trace().track(this->name(), "submission")),
      kernel_track_(nctlm::trace().track("device", "kernel")),
      to_host_track_(nctlm::trace().track(this->name(), "to_host")) {
    SC_THREAD(copy_back_worker);
    SC_THREAD(device_worker);
}

TensorId Runtime::host_tensor(uint64_t bytes, bool host_pinned) {
    tensors_.push_back(Tensor{HostBuffer{bytes, host_pinned}});
    return TensorId(tensors_.size() - 1);
}

TensorId Runtime::device_tensor(uint64_t bytes) {
    Tensor t{HostBuffer{bytes, false}};
    t.on_device = true;
    t.device_ready_ns = 0;
    tensors_.push_back(t);
    return TensorId(tensors_.size() - 1);
}

void Runtime::to_device(TensorId id, uint32_t host_copies) {
    Tensor& t = tensors_.at(id);
    double issue_ns = now_ns();
    if (host_copies > 0)
        sc_core::wait(until(issue_ns + host_copies * host_.copy(t.host.bytes).ns));
    TransferTimes x = pcie_.to_device(t.host);
    x.issue_ns = issue_ns;
    t.on_device = true;
    t.device_ready_ns = x.done_ns;
    h2d_.push_back({x.issue_ns, x.done_ns});
    stats().counter(std::string(name()) + ".to_device_bytes", "B").add(double(t.host.bytes));
    // The host thread's part (set-up, staging); the bytes in flight show on the pcie/h2d track.
    // Spans on one track must nest or not overlap: the host part of copies never overlaps.
    SpanArgs a;
    a.bytes = t.host.bytes;
    a.bandwidth = false;  // the host's part; the bytes move on the pcie/h2d track
    nctlm::trace().span(to_device_track_, "to_device", x.issue_ns, x.host_free_ns, a);
    // Async: the DMA finishes on its own; kernels that read the tensor wait for device_ready_ns.
    sc_core::wait(until(async_ ? x.host_free_ns : x.done_ns));
}

TensorId Runtime::matmul(TensorId a, TensorId b, const MatmulShape& shape) {
    for (TensorId in : {a, b})
        if (!tensors_.at(in).on_device && !tensors_.at(in).pending && !tensors_.at(in).queued)
            sim_error(fmt::format(
                "{}: matmul input tensor {} is neither on the device nor produced by the graph", name(), in),
                msg::kHostRuntime);
    Tensor out{HostBuffer{shape.m * shape.n * element_bytes(shape.dtype), false}};
    out.pending = true;
    tensors_.push_back(out);
    TensorId id = TensorId(tensors_.size() - 1);
    graph_.push_back({a, b, id, shape});
    return id;
}

double Runtime::ready_at(TensorId t) const { return tensors_.at(t).device_ready_ns; }

void Runtime::mark_step() {
    if (graph_.empty())
        return;
    double start = now_ns(), submitted = start + cfg_.submission_cost.ns;
    if (device_) {  // the simulated device runs the graph (device_worker)
        for (Op& op : graph_) {
            tensors_[op.out].pending = false;
            tensors_[op.out].queued = true;
        }
        TensorId last = graph_.back().out;
        device_queue_.push_back({start, submitted, std::move(graph_)});
        graph_.clear();
        ++submissions_;
        submission_ns_ += submitted - start;
        stats().counter(std::string(name()) + ".submissions").add(1);
        nctlm::trace().span(submission_track_, "submission", start, submitted);
        device_posted_.notify(sc_core::SC_ZERO_TIME);
        if (async_)
            sc_core::wait(until(submitted));
        else
            wait_on_device(last);
        return;
    }
    // The device runs the graph's kernels in order once the graph is submitted and the device is
    // free; a kernel also waits for its inputs (a copy still in flight, an earlier graph's result).
    double t = std::max(submitted, device_free_ns_);
    for (Op& op : graph_) {
        double begin = std::max({t, ready_at(op.a), ready_at(op.b)});
        double end = begin + kernels_.matmul(op.shape).ns;
        nctlm::trace().span(kernel_track_, "matmul", begin, end);
        device_busy_ns_ += end - begin;
        Tensor& out = tensors_[op.out];
        out.pending = false;
        out.on_device = true;
        out.device_ready_ns = end;
        t = end;
        ++kernels_run_;
    }
    device_free_ns_ = t;
    graph_.clear();
    ++submissions_;
    submission_ns_ += submitted - start;
    graphs_.push_back({start, t});
    stats().counter(std::string(name()) + ".submissions").add(1);
    nctlm::trace().span(submission_track_, "submission", start, submitted);
    sc_core::wait(until(async_ ? submitted : t));
}

void Runtime::to_host(TensorId id, bool host_pinned) {
    tensors_.at(id).host.pinned = host_pinned;
    if (tensors_.at(id).pending)
        mark_step();
    if (!tensors_.at(id).on_device && !tensors_.at(id).queued) {
        sim_error(fmt::format("{}: to_host of tensor {} that is not on the device", name(), id), msg::kHostRuntime);
        return;
    }
    if (!async_) {
        copy_back(id);
        return;
    }
    copy_queue_.push_back(id);
    ++copies_pending_;
    copy_posted_.notify(sc_core::SC_ZERO_TIME);
}

void Runtime::wait_on_device(TensorId id) {
    while (!tensors_[id].on_device)
        sc_core::wait(device_progress_);
    sc_core::wait(until(ready_at(id)));
}

// The simulated device: graphs in submission order, kernels in graph order, each on the chip.
void Runtime::device_worker() {
    for (;;) {
        while (device_queue_.empty())
            sc_core::wait(device_posted_);
        Graph& g = device_queue_.front();
        sc_core::wait(until(std::max(g.submitted_ns, device_free_ns_)));
        for (Op& op : g.ops) {
            wait_on_device(op.a);
            wait_on_device(op.b);
            double begin = now_ns();
            device_(op.shape);
            double end = now_ns();
            nctlm::trace().span(kernel_track_, "matmul", begin, end);
            device_busy_ns_ += end - begin;
            Tensor& out = tensors_[op.out];
            out.queued = false;
            out.on_device = true;
            out.device_ready_ns = end;
            ++kernels_run_;
            device_progress_.notify(sc_core::SC_ZERO_TIME);
        }
        device_free_ns_ = now_ns();
        graphs_.push_back({g.start_ns, device_free_ns_});
        device_queue_.pop_front();
        device_progress_.notify(sc_core::SC_ZERO_TIME);
    }
}

void Runtime::copy_back(TensorId id) {
    wait_on_device(id);
    const Tensor& t = tensors_[id];
    TransferTimes x = pcie_.to_host(t.host);
    d2h_.push_back({x.issue_ns, x.done_ns});
    stats().counter(std::string(name()) + ".to_host_bytes", "B").add(double(t.host.bytes));
    SpanArgs a;
    a.bytes = t.host.bytes;
    a.bandwidth = false;  // the bytes move on the pcie/d2h track
    nctlm::trace().span(to_host_track_, "to_host", x.issue_ns, x.done_ns, a);
    sc_core::wait(until(x.done_ns));
}

// One worker thread serves copies back in order, as the runtime's transfer thread would.
void Runtime::copy_back_worker() {
    for (;;) {
        while (copy_queue_.empty())
            sc_core::wait(copy_posted_);
        TensorId id = copy_queue_.front();
        copy_queue_.pop_front();
        copy_back(id);
        --copies_pending_;
        copy_done_.notify(sc_core::SC_ZERO_TIME);
    }
}

void Runtime::synchronize() {
    while (!device_queue_.empty())
        sc_core::wait(device_progress_);
    while (copies_pending_ > 0)
        sc_core::wait(copy_done_);
    sc_core::wait(until(device_free_ns_));
}

} // namespace nctlm
