#include "testbenches/kernel/kernel.h"

#include "models/common/stats.h"
#include "platforms/shipped_configs.h"

#include <algorithm>
#include <fmt/format.h>

namespace nctlm {

using kernel::KernelError;

const FieldList<KernelTestbenchConfig>& KernelTestbenchConfig::fields() {
    using C = KernelTestbenchConfig;
    static const FieldList<C> f = {
        count("first_tile", &C::first_tile, "0", 0, 255, "NeuronCore that runs instance 0 of the kernel's grid")
            .setting("where the kernel runs"),
        count("core_stride", &C::core_stride, "1", 1, 255,
              "instance i runs on tile first_tile + i x core_stride (2 on trn2: one core per stack)")
            .setting("where the kernel runs")};
    return f;
}

namespace {

// The engines whose busy time the PE's stats keep, by their report name.
struct EngineStat {
    const char* name;
    const char* busy;
};
const EngineStat kEngines[] = {{"tensor", "tensor.busy_ns"},
                               {"fetch", "tensor.fetch_busy_ns"},
                               {"vector", "vector.busy_ns"},
                               {"scalar", "scalar.busy_ns"},
                               {"dma issue", "dma_issue_busy_ns"}};
} // namespace

void KernelTestbench::configure(const ConfigTree& tree) {
    tb_ = tree.load<KernelTestbenchConfig>("testbench");
    if (file_.empty())
        throw ConfigError("testbench 'kernel' needs a kernel program: -w FILE.json (docs/kernels.md) or a shipped "
                          "kernel by name, or trace one from Python with `nctlm kernel FILE.py::FN`");
    PlatformConfig pc = PlatformConfig::load(tree);
    if (tb_.first_tile >= pc.platform.tiles)
        throw ConfigError(fmt::format("{}: testbench.first_tile={} but the platform has {} tiles",
                                      tree.where("testbench", "first_tile"), tb_.first_tile, pc.platform.tiles));
    try {
        program_ = std::make_shared<kernel::KernelProgram>(kernel::KernelProgram::load(file_));
        if (const YAML::Node& args = tree.root()["kernel"]) {
            if (!args.IsMap())
                throw ConfigError(tree.where("kernel", "") + ": kernel is a map of argument values (kernel.NAME=VALUE)");
            nlohmann::json echo = nlohmann::json::object();
            for (auto it = args.begin(); it != args.end(); ++it) {
                std::string name = it->first.Scalar(), where = tree.where("kernel", name);
                std::string text = it->second.IsScalar() ? it->second.Scalar() : "";
                size_t used = 0;
                long long v = 0;
                try {
                    v = std::stoll(text, &used);
                } catch (const std::exception&) {
                    used = 0;
                }
                if (used == 0 || used != text.size())
                    throw ConfigError(fmt::format("{}: kernel.{}={}: a kernel argument is an integer", where, name, text));
                try {
                    program_->set_arg(name, v);
                } catch (const KernelError& e) {
                    throw ConfigError(where + ": " + e.what());
                }
                echo[name] = v;
            }
            tree.record("kernel", echo);  // in the stats JSON's config: --replay sets them again
        }
    } catch (const KernelError& e) {
        throw ConfigError(e.what());
    }
    launch_ = KernelLaunch(program_, pc, tb_.first_tile, tb_.core_stride);
    // A library kernel (the program traced from kernels/NAME.py) on one core: its roofline.
    roofline_.reset();
    const auto& library = analytic::library_kernels();
    if (launch_.instances() == 1 && program_->source == "kernels/" + program_->name + ".py" &&
        std::find(library.begin(), library.end(), program_->name) != library.end()) {
        std::map<std::string, int64_t> args;
        for (size_t i = 0; i < program_->arg_names.size(); ++i)
            args[program_->arg_names[i]] = program_->arg_values[i];
        try {
            roofline_ = analytic::kernel_roofline(program_->name, args, pc.pe, pc.dma, pc.hbm);
        } catch (const std::invalid_argument& e) {
            // Arguments outside the library kernel's requirements (C not a multiple of 512, ...):
            // its loops would silently leave the remainder out.
            throw ConfigError(fmt::format("{}: {} (docs/kernels.md lists each library kernel's requirements)",
                                          file_.empty() ? program_->name : file_, e.what()));
        }
    }
    instances_.clear();
    for (uint32_t i = 0; i < launch_.instances(); ++i)
        instances_.emplace_back().tile = launch_.tile(i);
}

void KernelTestbench::build(Platform& p) {
    pe_ = p.config.pe;
    platform_name_ = p.config.platform.name;
    hbm_peak_ = p.config.hbm.stack_bandwidth().bytes_per_s * p.config.hbm.stacks;
    memory_ = MemorySystemNames::of(p);
    launch_.place(p);
    for (size_t i = 0; i < instances_.size(); ++i) {
        Instance& in = instances_[i];
        ProcessingElement& pe = p.tiles[in.tile].pe;
        in.pe = pe.name();
        in.program = launch_.pe_program(uint32_t(i));
        sc_core::sc_spawn(
            [this, &pe, &in] {
                in.record = pe.execute(in.program);
                in.finished = true;
                ++finished_;
            },
            fmt::format("kernel_instance{}", i).c_str());
    }
}

uint64_t KernelTestbench::memory_estimate() const {
    // Per instance: the per-tile stage records, and per unit a lowering (its loop stack and the
    // dependency records, bounded per buffer copy and tensor).
    if (!program_)
        return 0;
    uint64_t copies = 0;
    for (auto& b : launch_.layout().buffers)
        copies += b.bufs;
    uint64_t per_lowering = (copies + program_->tensors.size()) * kernel::DependencyTracker::kMaxRecords * 48 + 64 * 1024;
    uint64_t total = 0;
    for (uint32_t i = 0; i < launch_.instances(); ++i)
        total += launch_.counts(i).tiles * sizeof(std::array<Interval, kStages>) + kUnits * per_lowering;
    return total;
}

nlohmann::json KernelTestbench::results() const {
    nlohmann::json r;
    r["kernel"] = program_->name;
    r["file"] = file_;
    if (!program_->source.empty())
        r["source"] = program_->source;
    nlohmann::json args = nlohmann::json::object();
    for (size_t i = 0; i < program_->arg_names.size(); ++i)
        args[program_->arg_names[i]] = program_->arg_values[i];
    r["args"] = args;
    r["grid"] = instances_.size();
    if (finished_ != instances_.size()) {
        r["error"] = "the kernel did not finish";
        return r;
    }
    double start = 1e300, end = 0, submit = 1e300;
    for (auto& in : instances_) {
        start = std::min(start, in.record.launch_ns);
        submit = std::min(submit, in.record.submit_ns);
        end = std::max(end, in.record.end_ns);
    }
    const double wall = end - start;
    // Per engine: the busiest instance's busy time; every instance's instruction count.
    kernel::KernelCounts total;
    for (uint32_t i = 0; i < launch_.instances(); ++i)
        total += launch_.counts(i);
    std::vector<ResourceUse> use;
    nlohmann::json engines = nlohmann::json::object();
    const std::pair<const char*, Unit> units[] = {{"tensor", Unit::Tensor},
                                                  {"fetch", Unit::Fetch},
                                                  {"vector", Unit::Vector},
                                                  {"scalar", Unit::Scalar},
                                                  {"dma issue", Unit::DmaIn}};
    for (size_t e = 0; e < std::size(kEngines); ++e) {
        double most = 0;
        for (auto& in : instances_) {
            double b = stats().value(in.pe + "." + kEngines[e].busy);
            most = std::max(most, b);
            use.push_back({fmt::format("tile {} {}", in.tile, kEngines[e].name), wall > 0 ? b / wall : 0});
        }
        engines[kEngines[e].name] = {{"busy_ns", most},
                                     {"utilization", wall > 0 ? most / wall : 0},
                                     {"instructions", units[e].second == Unit::DmaIn
                                                          ? total.per_unit[size_t(Unit::DmaIn)] +
                                                                total.per_unit[size_t(Unit::DmaOut)]
                                                          : total.per_unit[size_t(units[e].second)]}};
    }
    memory_.add_use(use, true, wall);
    ResourceUse most = busiest(use);
    // Time the matmuls would take at the tensor engines' peak, per dtype, over the wall: the
    // fraction of peak (exact for mixed dtypes too).
    double at_peak_s = 0;
    for (auto& [d, f] : total.flops_by_dtype)
        at_peak_s += f / pe_.peak_flops(kernel::parse_elem_type(d).dtype);
    double bytes = double(total.dma_bytes_in + total.dma_bytes_out);
    r["platform"] = platform_name_;
    r["tiles"] = [&] {
        nlohmann::json t = nlohmann::json::array();
        for (auto& in : instances_)
            t.push_back(in.tile);
        return t;
    }();
    r["sim_time_ns"] = wall;
    r["launch_overhead_ns"] = start - submit;
    r["device_ns"] = end - submit;  // the kernel's device latency, launch included (neuron-bench's nc_latency)
    r["engines"] = engines;
    r["dma"] = {{"instructions_in", total.per_unit[size_t(Unit::DmaIn)]},
                {"instructions_out", total.per_unit[size_t(Unit::DmaOut)]},
                {"bytes_in", total.dma_bytes_in},
                {"bytes_out", total.dma_bytes_out},
                {"descriptors", total.descriptors},
                {"mean_descriptor_bytes", total.descriptors ? bytes / double(total.descriptors) : 0.0}};
    r["hbm_gb_per_s"] = wall > 0 ? bytes / wall : 0;
    r["hbm_peak_gb_per_s"] = hbm_peak_ / 1e9;
    r["flops"] = total.flops;
    r["tflops"] = wall > 0 ? total.flops / wall / 1e3 : 0;
    r["fraction_of_peak"] = wall > 0 ? at_peak_s / (wall * 1e-9 * double(instances_.size())) : 0;
    r["peak_tflops_per_core"] = pe_.peak_flops(total.flops_by_dtype.size() == 1
                                                   ? kernel::parse_elem_type(total.flops_by_dtype.begin()->first).dtype
                                                   : Dtype::Bf16) /
                                1e12;
    r["bound"] = resource_kind(most.resource);
    r["busiest_resource"] = most.resource;
    r["busiest_utilization"] = most.utilization;
    r["instructions"] = total.instructions;
    r["instructions_by_op"] = total.per_op;
    nlohmann::json per = nlohmann::json::array();
    for (auto& in : instances_)
        per.push_back({{"tile", in.tile}, {"sim_time_ns", in.record.end_ns - in.record.launch_ns}});
    r["per_instance"] = per;
    if (roofline_) {
        nlohmann::json ceilings = nlohmann::json::object();
        for (auto& c : roofline_->ceilings)
            ceilings[c.resource] = c.ns;
        r["roofline"] = {{"ns", roofline_->bound.ns},
                         {"bound", roofline_->bound.resource},
                         {"ceilings", ceilings},
                         {"flops", roofline_->work.flops},
                         {"bytes_in", roofline_->work.bytes_in},
                         {"bytes_out", roofline_->work.bytes_out},
                         {"sim_over_roofline", roofline_->bound.ns > 0 ? wall / roofline_->bound.ns : 0.0}};
    }
    return r;
}

std::string KernelTestbench::summary() const {
    nlohmann::json r = results();
    if (r.contains("error"))
        return "kernel " + program_->name + ": " + r["error"].get<std::string>();
    std::string s = fmt::format("kernel {} on {} ({} instance(s)): {} instructions, wall {:.1f} ns\n", program_->name,
                                platform_name_, instances_.size(), r["instructions"].get<uint64_t>(),
                                r["sim_time_ns"].get<double>());
    for (auto& e : kEngines) {
        const nlohmann::json& en = r["engines"][e.name];
        s += fmt::format("  {:<7} {:>10} instructions, busy {:>12.1f} ns = {:5.1f} % of wall\n", e.name,
                         en["instructions"].get<uint64_t>(), en["busy_ns"].get<double>(),
                         100 * en["utilization"].get<double>());
    }
    s += fmt::format("  dma     {} in + {} out instructions, {} descriptors ({:.0f} B mean), {} in, {} out, "
                     "{:.1f} GB/s (HBM peak {:.0f} GB/s)\n",
                     r["dma"]["instructions_in"].get<uint64_t>(), r["dma"]["instructions_out"].get<uint64_t>(),
                     r["dma"]["descriptors"].get<uint64_t>(), r["dma"]["mean_descriptor_bytes"].get<double>(),
                     format_bytes(r["dma"]["bytes_in"].get<uint64_t>()),
                     format_bytes(r["dma"]["bytes_out"].get<uint64_t>()), r["hbm_gb_per_s"].get<double>(),
                     r["hbm_peak_gb_per_s"].get<double>());
    if (r["flops"].get<double>() > 0)
        s += fmt::format("  {:.2f} TFLOPS = {:.1f} % of the tensor engines' peak\n", r["tflops"].get<double>(),
                         100 * r["fraction_of_peak"].get<double>());
    s += fmt::format("  bound: {} ({}, {:.1f} % busy)", r["bound"].get<std::string>(),
                     r["busiest_resource"].get<std::string>(), 100 * r["busiest_utilization"].get<double>());
    if (r.contains("roofline"))
        s += fmt::format("\n  roofline (closed form, a cross-check): {:.1f} ns, {}; sim / roofline {:.2f}",
                         r["roofline"]["ns"].get<double>(), r["roofline"]["bound"].get<std::string>(),
                         r["roofline"]["sim_over_roofline"].get<double>());
    return s;
}

} // namespace nctlm
