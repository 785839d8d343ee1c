#include "testbenches/host/host.h"

#include "models/common/sim.h"
#include "models/host/transfer_schedule.h"
#include "testbenches/gemm/gemm.h"

#include <fmt/format.h>

namespace nctlm {

const FieldList<HostWorkload>& HostWorkload::fields() {
    using C = HostWorkload;
    static const FieldList<C> f = {
        count("n", &C::n, nullptr, 1, 65536, "matrix size: an n x n x n matmul"),
        count("pad_n", &C::pad_n, "0", 0, 65536,
              "pad B's and C's columns up to a multiple of this when n exceeds it, as a library kernel with a "
              "fixed column tile does (trntensor: 512); 0 = no padding"),
        count("host_copies", &C::host_copies, "0", 0, 16,
              "whole-tensor CPU copies the program makes of each input right before to_device (a benchmark's "
              "clone(); part of the timed to_device)"),
        choice("dtype", &C::dtype, {{"fp32", DType::Fp32}, {"bf16", DType::Bf16}}, "fp32", "element type"),
        flag("pinned", &C::pinned, "false", "inputs already resident on the device (no host->device copy)"),
        flag("host_pinned", &C::host_pinned, "false", "host buffers page-locked: DMA in place after pinning (no bounce copy)"),
        count("kernels", &C::kernels, "1", 1, 100000, "dependent matmuls in sequence (C = C . B)"),
        flag("barrier", &C::barrier, "true", "mark_step after every kernel; false fuses them into one graph"),
        count("batch", &C::batch, "1", 1, 100000,
              "independent matmuls per graph: one submission, batch kernels"),
        flag("async", &C::async, "true",
             "runtime does not wait for the device between calls (torch-neuronx)"),
        flag("copy_each", &C::copy_each, "false", "copy every step's results back, not only the last"),
    };
    return f;
}

void HostTestbench::configure(const ConfigTree& tree) {
    w_ = tree.load<HostWorkload>("workload");
    where_n_ = tree.where("workload", "n");
    if (w_.padded_n() != w_.n && w_.kernels > 1)
        throw ConfigError(fmt::format("{}: workload.pad_n pads C to {} columns, so C = C . B cannot chain; "
                                      "use kernels: 1 with padding",
                                      tree.where("workload", "pad_n"), w_.padded_n()));
    // The runtime keeps a record per tensor (a few per kernel and batch entry): bound the graph
    // so memory stays bounded (10^10 records died of bad_alloc at 4.2 GB).
    constexpr uint64_t kMaxOps = 10'000'000;
    if (uint64_t(w_.kernels) * w_.batch > kMaxOps)
        throw ConfigError(fmt::format("{}: workload.kernels x workload.batch = {} x {} = {} exceeds {} matmuls "
                                      "per run; split the run or lower one of them",
                                      tree.where("workload", "kernels"), w_.kernels, w_.batch,
                                      uint64_t(w_.kernels) * w_.batch, kMaxOps));
}

// The device kernel: the whole GEMM (gemm.h) of the shape on host.kernel_cores NeuronCores, by
// output rows, 128 x 128 x 512 matmuls, the blocking the search picks.
std::string HostTestbench::plan_kernel(const Platform& p, const MatmulShape& s, analytic::GemmPlan& plan) {
    const PlatformConfig& c = p.config;
    GemmWorkload g;
    g.m = uint32_t(s.m);
    g.k = uint32_t(s.k);
    g.n = uint32_t(s.n);
    g.dtype = s.dtype == DType::Fp32 ? Dtype::Fp32 : Dtype::Bf16;
    g.tile_m = std::min(c.pe.tensor_cols, c.pe.sbuf_partitions);
    g.tile_k = std::min(c.pe.tensor_rows, c.pe.sbuf_partitions);
    g.tile_n = c.pe.moving_max;
    uint32_t cores = 0;
    std::string problem = analytic::plan_gemm_cores(std::to_string(c.host.kernel_cores), uint32_t(p.tiles.size()), cores);
    return problem.empty() ? analytic::plan_gemm(g, cores, c.pe, gemm_rates(p, cores, 1), plan) : problem;
}

void HostTestbench::build(Platform& p) {
    // The host side hangs off the platform; every kernel runs on the simulated chip (the
    // multi-core GEMM), the analytic kernel model stays as a cross-check in the results.
    const HostConfig& cfg = p.config.host;
    kernel_model_ = std::make_unique<AnalyticKernelCost>(cfg);
    host_ = std::make_unique<Host>("host", cfg);
    pcie_ = std::make_unique<PcieLink>("pcie", cfg, *host_);
    runtime_ = std::make_unique<Runtime>("runtime", cfg, *host_, *pcie_, *kernel_model_, w_.async);
    MatmulShape shape{w_.n, w_.padded_n(), w_.n, w_.dtype};
    analytic::GemmPlan plan;
    std::string problem = plan_kernel(p, shape, plan);
    if (!problem.empty())
        throw ConfigError(fmt::format("{}: the {}x{}x{} kernel on host.kernel_cores={}: {}", where_n_, w_.n, w_.n,
                                      w_.n, cfg.kernel_cores, problem));
    kernel_cores_ = make_gemm_cores(p, plan, 1, where_n_);
    Platform* platform = &p;
    runtime_->set_device([this, platform](const MatmulShape&) { run_gemm_cores(*platform, kernel_cores_); });
    sc_core::sc_spawn([this] { program(); }, "host_program");
}

uint64_t HostTestbench::memory_estimate() const {
    // The runtime keeps a tensor record per input and per result, plus graph entries: ~4 records
    // of ~128 B per kernel and batch entry.
    return uint64_t(w_.kernels) * w_.batch * 4 * 128 + uint64_t(w_.batch) * 2 * 128;
}

void HostTestbench::program() {
    Runtime& rt = *runtime_;
    MatmulShape shape{w_.n, w_.padded_n(), w_.n, w_.dtype};
    uint64_t a_bytes = shape.m * shape.k * element_bytes(w_.dtype), b_bytes = shape.k * shape.n * element_bytes(w_.dtype);
    start_ns_ = now_ns();
    std::vector<TensorId>&a = a_, &b = b_, &c = c_;
    for (uint32_t i = 0; i < w_.batch; ++i)
        for (auto [v, bytes] : {std::pair{&a, a_bytes}, std::pair{&b, b_bytes}}) {
            if (w_.pinned)
                v->push_back(rt.device_tensor(bytes));
            else {
                v->push_back(rt.host_tensor(bytes, w_.host_pinned));
                rt.to_device(v->back(), w_.host_copies);
            }
        }
    c = a;
    for (uint32_t k = 0; k < w_.kernels; ++k) {
        for (uint32_t i = 0; i < w_.batch; ++i)
            c[i] = rt.matmul(c[i], b[i], shape);
        bool last = k + 1 == w_.kernels;
        if (w_.barrier || last)
            rt.mark_step();
        if (w_.copy_each || last)
            for (TensorId t : c)
                rt.to_host(t, w_.host_pinned);
    }
    rt.synchronize();
    end_ns_ = now_ns();
}

nlohmann::json HostTestbench::results() const {
    auto ms = [](double ns) { return ns / 1e6; };
    auto busy = [](const std::vector<Runtime::Interval>& v) {
        std::vector<std::pair<double, double>> p;
        for (auto& i : v)
            p.emplace_back(i.start_ns, i.end_ns);
        return union_length(p);
    };
    const Runtime& rt = *runtime_;
    double to_device = busy(rt.to_device_intervals()), kernel = busy(rt.kernel_intervals()),
           to_host = busy(rt.to_host_intervals()), total = end_ns_ - start_ns_;
    return {{"n", w_.n},
            {"batch", w_.batch},
            {"kernels", w_.kernels},
            {"barrier", w_.barrier},
            {"pinned", w_.pinned},
            {"async", w_.async},
            {"to_device_ms", ms(to_device)},
            {"kernel_ms", ms(kernel)},
            {"to_host_ms", ms(to_host)},
            {"total_ms", ms(total)},
            {"overlap_ms", ms(to_device + kernel + to_host - total)},
            {"submissions", rt.submissions()},
            {"kernels_run", rt.kernels_run()},
            {"submission_ms", ms(rt.submission_ns())},
            {"device_busy_ms", ms(rt.device_busy_ns())},
            {"to_device_transfers", rt.to_device_intervals().size()},
            {"to_host_transfers", rt.to_host_intervals().size()},
            {"kernel_model", "chip"},
            {"analytic_kernel_ms", ms(kernel_model_->matmul(MatmulShape{w_.n, w_.padded_n(), w_.n, w_.dtype}).ns)},
            {"finished", end_ns_ >= 0}};
}

std::string HostTestbench::summary() const {
    auto r = results();
    auto row = [&](const char* name, const char* key) {
        return fmt::format("  {:<11} {:>9.3f} ms\n", name, r[key].get<double>());
    };
    return fmt::format(
               "host: {}x{}x{} {} matmul, batch {}, {} kernel(s), barrier {}, inputs {}, runtime {}\n", w_.n,
               w_.n, w_.n, w_.dtype == DType::Fp32 ? "fp32" : "bf16", w_.batch, w_.kernels,
               w_.barrier ? "on" : "off", w_.pinned ? "pinned on device" : "copied",
               w_.async ? "async" : "sync") +
           "  phase              time\n" + row("to_device", "to_device_ms") + row("kernel", "kernel_ms") +
           row("to_host", "to_host_ms") + row("total", "total_ms") + row("overlap", "overlap_ms") +
           fmt::format("  {} submission(s) ({:.3f} ms), {} kernel(s) on the device ({:.3f} ms busy), "
                       "{} + {} copies",
                       r["submissions"].get<uint32_t>(), r["submission_ms"].get<double>(),
                       r["kernels_run"].get<uint32_t>(), r["device_busy_ms"].get<double>(),
                       r["to_device_transfers"].get<size_t>(), r["to_host_transfers"].get<size_t>());
}

} // namespace nctlm
