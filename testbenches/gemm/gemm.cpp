#include "testbenches/gemm/gemm.h"

#include "models/analytic/gemm_model.h"
#include "testbenches/gemm/gemm_kernel.h"
#include "testbenches/kernel/kernel_launch.h"
#include "testbenches/limits.h"

#include <algorithm>
#include <fmt/format.h>

namespace nctlm {

namespace {
// The pipeline stages reported per tile (the weight preload runs before the window).
const Stage kPipelineStages[] = {Stage::DmaIn, Stage::Fetch, Stage::Gemm, Stage::Evacuate, Stage::WriteBack};

// Length of the union of intervals.
double union_length(std::vector<Interval> v) {
    std::sort(v.begin(), v.end(), [](const Interval& a, const Interval& b) { return a.start < b.start; });
    double total = 0, s = -1, e = -1;
    for (auto& i : v) {
        if (i.start < 0)
            continue;
        if (i.start > e) {
            total += e - s;
            s = i.start;
            e = i.end;
        } else {
            e = std::max(e, i.end);
        }
    }
    return total + (e - s);
}
} // namespace

const FieldList<GemmTestbenchConfig>& GemmTestbenchConfig::fields() {
    using C = GemmTestbenchConfig;
    static const FieldList<C> f = {
        count("tile", &C::tile, "0", 0, 255, "NeuronCore that runs the GEMM (tile-stream mode)"),
        count("core_stride", &C::core_stride, "1", 1, 255,
              "multi-core mode: the cores used are tiles 0, stride, 2 x stride, ... (2 on trn2: one core per stack)")};
    return f;
}

void GemmTestbench::configure(const ConfigTree& tree) {
    tb_ = tree.load<GemmTestbenchConfig>("testbench");
    w_ = tree.load<GemmWorkload>("workload");
    where_cores_ = tree.where("workload", w_.cores.empty() ? "m" : "cores");
    where_k_ = tree.where("workload", "k");
    check_tile(tree, PlatformConfig::load(tree), tb_.tile);
}

void GemmTestbench::build(Platform& p) {
    if (!w_.cores.empty())
        return build_multicore(p);
    if (tb_.tile >= p.tiles.size())
        throw ConfigError(
            fmt::format("testbench.tile={} but the platform has {} tiles", tb_.tile, p.tiles.size()));
    std::string problem = w_.check(p.config.pe);
    if (!problem.empty())
        throw ConfigError(problem);
    platform_ = p.config;
    // The pipeline (and the weight preload) as kernel programs: A, B and C in the tile's local stack.
    try {
        auto program = [&](const nlohmann::json& j) {
            KernelLaunch launch(std::make_shared<kernel::KernelProgram>(kernel::KernelProgram::from_json(j, "workload")),
                                p.config, tb_.tile, 1);
            launch.place(p);
            return launch.pe_program(0);
        };
        main_ = program(gemm_pipeline_kernel(w_, p.config.pe.operand_buffers));
        if (w_.weights_resident)
            preload_ = program(gemm_preload_kernel(w_));
    } catch (const std::invalid_argument& e) {
        throw ConfigError(where_k_ + ": " + e.what());
    }
    ProcessingElement& pe = p.tiles[tb_.tile].pe;
    pe_name_ = pe.name();
    sc_core::sc_spawn([this, &pe] { traffic(pe); }, "gemm_traffic");
}

void GemmTestbench::traffic(ProcessingElement& pe) {
    if (w_.weights_resident)
        pe.execute(preload_); // resident weights: loaded before the measured pipeline
    record_ = pe.execute(main_);
    done_ = true;
}

nlohmann::json GemmTestbench::results() const {
    if (!w_.cores.empty())
        return multicore_results();
    nlohmann::json r;
    r["tiles"] = w_.tiles;
    r["shape"] = {{"m", w_.m},
                  {"k", w_.k},
                  {"n", w_.n},
                  {"dtype", dtype_name(w_.dtype)},
                  {"buffers", w_.buffers},
                  {"weights_resident", w_.weights_resident},
                  {"matmuls_per_tile", w_.matmuls()}};
    if (!done_ || !platform_) {
        r["error"] = "the pipeline did not finish";
        return r;
    }
    // Window: kernel launch (first stage start, incl. the sequencer fill) to kernel done (incl. tail).
    double wall = record_.end_ns - record_.launch_ns;
    nlohmann::json stage_ns, busy_ns;
    double bottleneck = 0;
    std::string bottleneck_name;
    for (Stage s : kPipelineStages) {
        std::vector<Interval> spans;
        double sum = 0;
        for (auto& t : record_.tiles) {
            spans.push_back(t[int(s)]);
            sum += t[int(s)].length();
        }
        double mean = sum / double(record_.tiles.size());
        stage_ns[stage_name(s)] = mean;
        busy_ns[stage_name(s)] = union_length(spans);
        if (mean > bottleneck) {
            bottleneck = mean;
            bottleneck_name = stage_name(s);
        }
    }
    stage_ns["dma_start"] = platform_->dma.start_latency.ns;
    const PlatformConfig& c = *platform_;
    analytic::MemoryPath path(c.dma, c.noc, c.hbm);
    analytic::GemmStageTimes at = analytic::gemm_stage_times(w_, c.pe, c.dma, path);
    analytic::PipelineResult ar =
        analytic::evaluate(analytic::gemm_pipeline(w_, c.pe, c.dma, path), w_.tiles);
    r["sim_time_ns"] = wall;
    r["stage_ns"] = stage_ns;
    r["busy_ns"] = busy_ns;
    r["bottleneck"] = bottleneck_name;
    r["bottleneck_ns"] = bottleneck;
    // Efficiency: the busiest engine's busy time (the sum of its instructions' costs, one at a time)
    // over the wall. It cannot exceed 100 %, and falls when any other stage (HBM, DMA) holds the
    // engines back; stage latencies now include queueing, so tiles x latency / wall would not.
    double tensor = stats().value(pe_name_ + ".tensor.busy_ns"), vector = stats().value(pe_name_ + ".vector.busy_ns");
    r["efficiency"] = std::max(tensor, vector) / wall;
    r["efficiency_engine"] = tensor >= vector ? "tensor" : "vector";
    // The analytic pipeline's counterpart: its engine time per tile over its wall.
    r["analytic_efficiency"] = double(w_.tiles) * std::max(at.gemm, at.evacuate) / ar.wall_ns;
    r["analytic"] = {{"sim_time_ns", ar.wall_ns},
                     {"period_ns", ar.period_ns},
                     {"limiter", ar.limiter},
                     {"latency_ns", ar.latency_ns},
                     {"bottleneck", ar.bottleneck},
                     {"fill_ns", c.pe.pipeline_fill.ns},
                     {"tail_ns", c.pe.pipeline_tail.ns},
                     {"stage_ns",
                      {{"dma_start", at.dma_start},
                       {"dma_in", at.dma_in},
                       {"fetch", at.fetch},
                       {"gemm", at.gemm},
                       {"evacuate", at.evacuate},
                       {"write_back", at.write_back}}}};
    // The kernel's device latency (as neuron-bench's nc_latency): the launch overhead, then the profiled window.
    r["launch_overhead_ns"] = record_.launch_ns - record_.submit_ns;
    r["device_ns"] = record_.end_ns - record_.submit_ns;
    r["weights_preload_ns"] = w_.weights_resident ? record_.submit_ns : 0.0;
    return r;
}

std::string GemmTestbench::summary() const {
    if (!w_.cores.empty())
        return multicore_summary();
    nlohmann::json r = results();
    if (r.contains("error"))
        return "gemm: " + r["error"].get<std::string>();
    std::string s =
        fmt::format("gemm: {} tile(s) of {}x{}x{} {} ({} matmuls each), {} buffers, on {}\n", w_.tiles, w_.m,
                    w_.k, w_.n, dtype_name(w_.dtype), w_.matmuls(), w_.buffers, platform_->platform.name);
    s += fmt::format("  {:<11} {:>12} {:>12} {:>12}\n", "stage", "ns/tile", "analytic", "busy ns");
    for (const char* name : {"dma_in", "fetch", "gemm", "evacuate", "write_back"})
        s += fmt::format("  {:<11} {:>12.1f} {:>12.1f} {:>12.1f}\n", name, r["stage_ns"][name].get<double>(),
                         r["analytic"]["stage_ns"][name].get<double>(), r["busy_ns"][name].get<double>());
    s += fmt::format("  {:<11} {:>12.1f} (per DMA instruction, overlapped after the first)\n", "dma_start",
                     r["stage_ns"]["dma_start"].get<double>());
    s += fmt::format("  wall {:.1f} ns (analytic {:.1f} ns), bottleneck {} {:.1f} ns\n",
                     r["sim_time_ns"].get<double>(), r["analytic"]["sim_time_ns"].get<double>(),
                     r["bottleneck"].get<std::string>(), r["bottleneck_ns"].get<double>());
    s += fmt::format("  efficiency {:.1f} %   analytic efficiency {:.1f} %   (difference {:+.2f} ppt)",
                     100 * r["efficiency"].get<double>(), 100 * r["analytic_efficiency"].get<double>(),
                     100 * (r["analytic_efficiency"].get<double>() - r["efficiency"].get<double>()));
    return s;
}

// ---- multi-core mode -------------------------------------------------------------------------

void GemmTestbench::build_multicore(Platform& p) {
    const PlatformConfig& c = p.config;
    uint32_t cores = 0;
    std::string problem = analytic::plan_gemm_cores(w_.cores, uint32_t(p.tiles.size()), cores);
    if (problem.empty() && (cores - 1) * tb_.core_stride >= p.tiles.size())
        problem = fmt::format("{} cores at testbench.core_stride={} need {} tiles but the platform has {}", cores,
                              tb_.core_stride, (cores - 1) * tb_.core_stride + 1, p.tiles.size());
    if (problem.empty())
        problem = analytic::plan_gemm(w_, cores, c.pe, gemm_rates(p, cores, tb_.core_stride), plan_);
    if (!problem.empty()) {
        // Point at the key the problem is about: the core count, or the shape.
        const std::string& at = problem.rfind("workload.cores", 0) == 0 ||
                                        problem.find("testbench.core_stride") != std::string::npos
                                    ? where_cores_
                                    : where_k_;
        throw ConfigError(at + ": " + problem);
    }
    platform_ = c;
    memory_ = MemorySystemNames::of(p);
    cores_ = make_gemm_cores(p, plan_, tb_.core_stride, where_cores_);
    for (size_t k = 0; k < cores_.size(); ++k) {
        ProcessingElement& pe = p.tiles[cores_[k].tile].pe;
        sc_core::sc_spawn(
            [this, &pe, k] {
                cores_[k].record = pe.execute(cores_[k].program);
                if (++finished_ == cores_.size())
                    done_ = true;
            },
            fmt::format("gemm_core{}", k).c_str());
    }
}

analytic::GemmRates gemm_rates(const Platform& p, uint32_t cores, uint32_t stride) {
    const PlatformConfig& c = p.config;
    std::vector<uint32_t> per_stack(c.hbm.stacks, 0);
    uint32_t sharing = 1;
    for (uint32_t k = 0; k < cores; ++k)
        sharing = std::max(sharing, ++per_stack.at(p.local_stack(k * stride)));
    double stack = c.hbm.stack_bandwidth().bytes_per_s / sharing;
    double rate = std::min(c.dma.data_bandwidth().bytes_per_s, stack);
    analytic::GemmRates r{rate / 1e9, c.dma.start_latency.ns, c.hbm.interleave};
    r.use_engines(c.dma);
    return r;
}

std::vector<GemmCore> make_gemm_cores(Platform& p, const analytic::GemmPlan& plan, uint32_t stride,
                                      const std::string& where) {
    // One kernel program over the cores (each core's A^T columns, a copy of B and its C rows in its
    // local stack; cores sharing a stack get consecutive regions).
    std::vector<GemmCore> cores;
    try {
        nlohmann::json j = gemm_blocked_kernel(plan.core.dtype);
        set_gemm_blocked_args(j, plan.m, plan.rows_per_core, plan.cores, plan.k, plan.n, plan.core, plan.chosen.blocking);
        KernelLaunch launch(std::make_shared<kernel::KernelProgram>(kernel::KernelProgram::from_json(j, "workload")),
                            p.config, 0, stride);
        launch.place(p);
        for (uint32_t k = 0; k < plan.cores; ++k) {
            GemmCore& core = cores.emplace_back();
            core.tile = launch.tile(k);
            core.pe = p.tiles[core.tile].pe.name();
            core.program = launch.pe_program(k);
            core.counts = launch.counts(k);
        }
    } catch (const ConfigError& e) {
        throw ConfigError(where + ": " + e.what());
    }
    return cores;
}

void run_gemm_cores(Platform& p, std::vector<GemmCore>& cores) {
    uint32_t left = uint32_t(cores.size());
    sc_core::sc_event done;
    for (auto& core : cores) {
        ProcessingElement& pe = p.tiles[core.tile].pe;
        sc_core::sc_spawn([&pe, &core, &left, &done] {
            core.record = pe.execute(core.program);
            if (--left == 0)
                done.notify(sc_core::SC_ZERO_TIME);
        });
    }
    while (left > 0)
        sc_core::wait(done);
}

nlohmann::json GemmTestbench::multicore_results() const {
    nlohmann::json r;
    const analytic::GemmBlocking& b = plan_.chosen.blocking;
    const analytic::GemmBlockingCost& est = plan_.chosen.cost;
    r["shape"] = {{"m", w_.m}, {"k", w_.k}, {"n", w_.n}, {"dtype", dtype_name(w_.dtype)}};
    r["cores"] = plan_.cores;
    r["partition"] = {{"by", "output rows; per core the blocked GEMM, K accumulated in SBUF per block"},
                      {"rows_per_core", plan_.rows_per_core},
                      {"tile", {{"m", w_.tile_m}, {"k", w_.tile_k}, {"n", w_.tile_n}}}};
    r["blocking"] = {{"bm", b.bm}, {"bn", b.bn}, {"bk", b.bk}, {"a_bufs", b.a_bufs}, {"b_bufs", b.b_bufs},
                     {"psum_bufs", b.psum_bufs}, {"sbuf_bytes_per_partition", est.sbuf_bytes}};
    if (!done_ || !platform_) {
        r["error"] = "the pipeline did not finish";
        return r;
    }
    const PlatformConfig& c = *platform_;
    double start = 1e300, end = 0, bytes = 0;
    nlohmann::json per_core = nlohmann::json::array();
    double core_peak = c.pe.peak_flops(w_.dtype);
    std::vector<ResourceUse> use;
    const std::pair<const char*, const char*> engines[] = {{"tensor engine", "tensor.busy_ns"},
                                                           {"vector engine", "vector.busy_ns"},
                                                           {"scalar engine", "scalar.busy_ns"},
                                                           {"dma issue", "dma_issue_busy_ns"}};
    double submit = 1e300;
    for (auto& k : cores_) {
        start = std::min(start, k.record.launch_ns);
        submit = std::min(submit, k.record.submit_ns);
        end = std::max(end, k.record.end_ns);
    }
    double wall = end - start;
    for (auto& k : cores_) {
        double core_wall = k.record.end_ns - k.record.launch_ns;
        per_core.push_back({{"tile", k.tile},
                            {"sim_time_ns", core_wall},
                            {"efficiency", k.counts.flops / (core_wall * 1e-9) / core_peak}});
        bytes += double(k.counts.dma_bytes_in + k.counts.dma_bytes_out);
        for (auto& [name, stat] : engines)
            use.push_back({fmt::format("tile {} {}", k.tile, name), wall > 0 ? stats().value(k.pe + "." + stat) / wall : 0});
    }
    memory_.add_use(use, false, wall);
    ResourceUse most = busiest(use);
    double achieved = plan_.flops() / (wall * 1e-9);
    double platform_peak = core_peak * c.platform.tiles;
    r["sim_time_ns"] = wall;
    r["launch_overhead_ns"] = start - submit;
    r["device_ns"] = end - submit;  // the kernel's device latency, launch included (neuron-bench's nc_latency)
    r["flops"] = plan_.flops();
    r["tflops"] = achieved / 1e12;
    r["core_peak_tflops"] = core_peak / 1e12;
    r["platform_peak_tflops"] = platform_peak / 1e12;
    r["chip_efficiency"] = achieved / platform_peak;
    r["per_core_efficiency"] = achieved / (core_peak * plan_.cores);
    r["per_core"] = per_core;
    r["hbm_bytes"] = bytes;
    r["gb_per_s"] = bytes / wall;
    r["busiest_resource"] = most.resource;
    r["busiest_utilization"] = most.utilization;
    r["bound"] = resource_kind(most.resource);
    // The search's closed-form estimate of one core's share (contention-free): a cross-check.
    double core_flops = 2.0 * double(plan_.core.m) * plan_.k * plan_.n;
    r["analytic"] = {{"sim_time_ns", est.total_ns},
                     {"per_core_efficiency", core_flops / (est.total_ns * 1e-9) / core_peak},
                     {"bound", est.bound},
                     {"tensor_ns", est.tensor_ns},
                     {"vector_ns", est.vector_ns},
                     {"scalar_ns", est.scalar_ns},
                     {"dma_ns", est.dma_ns},
                     {"hbm_bytes_per_core", est.hbm_bytes}};
    r["sim_over_analytic"] = wall / est.total_ns;
    return r;
}

std::string GemmTestbench::multicore_summary() const {
    nlohmann::json r = multicore_results();
    if (r.contains("error"))
        return "gemm: " + r["error"].get<std::string>();
    const analytic::GemmBlocking& b = plan_.chosen.blocking;
    return fmt::format(
        "gemm: {}x{}x{} {} on {} core(s) of {} (by output rows: {} rows per core; blocks of {} x {} rows x columns, "
        "K in blocks of {}, A/B {}/{}-buffered, {} PSUM tiles)\n"
        "  wall {:.1f} us, {:.2f} TFLOPS = {:.1f} % of the platform peak ({:.2f} TFLOPS), per-core efficiency "
        "{:.1f} %; bound: {} ({}, {:.1f} %)\n  analytic estimate (contention-free) {:.1f} us, per-core efficiency "
        "{:.1f} % ({} bound); sim/analytic {:.3f}",
        w_.m, w_.k, w_.n, dtype_name(w_.dtype), plan_.cores, platform_->platform.name, plan_.rows_per_core, b.bm, b.bn,
        b.bk, b.a_bufs, b.b_bufs, b.psum_bufs, r["sim_time_ns"].get<double>() / 1e3, r["tflops"].get<double>(),
        100 * r["chip_efficiency"].get<double>(), r["platform_peak_tflops"].get<double>(),
        100 * r["per_core_efficiency"].get<double>(), r["bound"].get<std::string>(),
        r["busiest_resource"].get<std::string>(), 100 * r["busiest_utilization"].get<double>(),
        r["analytic"]["sim_time_ns"].get<double>() / 1e3, 100 * r["analytic"]["per_core_efficiency"].get<double>(),
        r["analytic"]["bound"].get<std::string>(), r["sim_over_analytic"].get<double>());
}

} // namespace nctlm
