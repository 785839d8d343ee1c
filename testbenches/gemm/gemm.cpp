#include "testbenches/gemm/gemm.h"

#include "models/analytic/gemm_model.h"
#include "testbenches/limits.h"

#include <algorithm>
#include <fmt/format.h>

namespace nctlm {

namespace {
// The pipeline stages reported per tile (the weight preload runs before the window).
const Stage kPipelineStages[] = {Stage::DmaIn, Stage::Fetch, Stage::Gemm, Stage::Evacuate, Stage::WriteBack};

uint64_t round_up(uint64_t x, uint64_t to) {
    return (x + to - 1) / to * to;
}

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
    static const FieldList<C> f = {count("tile", &C::tile, "0", 0, 255, "NeuronCore that runs the GEMM")};
    return f;
}

void GemmTestbench::configure(const ConfigTree& tree) {
    tb_ = tree.load<GemmTestbenchConfig>("testbench");
    w_ = tree.load<GemmWorkload>("workload");
    check_tile(tree, PlatformConfig::load(tree), tb_.tile);
}

void GemmTestbench::build(Platform& p) {
    if (tb_.tile >= p.tiles.size())
        throw ConfigError(
            fmt::format("testbench.tile={} but the platform has {} tiles", tb_.tile, p.tiles.size()));
    std::string problem = w_.check(p.config.pe);
    if (!problem.empty())
        throw ConfigError(problem);
    platform_ = p.config;
    // Operands in the tile's local stack: all A tiles, then B, then all C tiles.
    uint64_t align = p.config.hbm.interleave * p.config.hbm.pseudo_channels;
    GemmAddresses a;
    uint64_t base = p.stack_address(p.local_stack(tb_.tile), 0);
    a.a = base;
    a.b = a.a + round_up(uint64_t(w_.tiles) * w_.a_bytes(), align);
    a.c = a.b + round_up(uint64_t(w_.weights_resident ? 1 : w_.tiles) * w_.b_bytes(), align);
    uint64_t end = a.c + round_up(uint64_t(w_.tiles) * w_.c_bytes(), align);
    if (end - base > p.config.hbm.stack_capacity)
        throw ConfigError(fmt::format("workload needs {} of HBM but a stack holds {}",
                                      format_bytes(end - base), format_bytes(p.config.hbm.stack_capacity)));
    try {
        main_ = make_gemm_program(w_, p.config.pe, a);
    } catch (const std::invalid_argument& e) {
        throw ConfigError(e.what());
    }
    if (w_.weights_resident)
        preload_ = make_weight_preload(w_, a);
    ProcessingElement& pe = p.tiles[tb_.tile].pe;
    sc_core::sc_spawn([this, &pe] { traffic(pe); }, "gemm_traffic");
}

void GemmTestbench::traffic(ProcessingElement& pe) {
    if (!preload_.instructions.empty())
        pe.execute(preload_); // resident weights: loaded before the measured pipeline
    record_ = pe.execute(main_);
    done_ = true;
}

nlohmann::json GemmTestbench::results() const {
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
    r["wall_ns"] = wall;
    r["stage_ns"] = stage_ns;
    r["busy_ns"] = busy_ns;
    r["bottleneck"] = bottleneck_name;
    r["bottleneck_ns"] = bottleneck;
    r["efficiency"] = double(w_.tiles) * bottleneck / wall;
    r["analytic_efficiency"] = ar.efficiency;
    r["analytic"] = {{"wall_ns", ar.wall_ns},
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
    r["weights_preload_ns"] = w_.weights_resident ? record_.launch_ns : 0.0;
    return r;
}

std::string GemmTestbench::summary() const {
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
                     r["wall_ns"].get<double>(), r["analytic"]["wall_ns"].get<double>(),
                     r["bottleneck"].get<std::string>(), r["bottleneck_ns"].get<double>());
    s += fmt::format("  efficiency {:.1f} %   analytic efficiency {:.1f} %   (difference {:+.2f} ppt)",
                     100 * r["efficiency"].get<double>(), 100 * r["analytic_efficiency"].get<double>(),
                     100 * (r["analytic_efficiency"].get<double>() - r["efficiency"].get<double>()));
    return s;
}

} // namespace nctlm
