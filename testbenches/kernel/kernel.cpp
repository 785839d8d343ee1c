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
        count("first_tile", &C::first_tile, "0", 0, 255, "NeuronCore that runs instance 0 of the kernel's grid"),
        count("core_stride", &C::core_stride, "1", 1, 255,
              "instance i runs on tile first_tile + i x core_stride (2 on trn2: one core per stack)")};
    return f;
}

namespace {
uint64_t round_up(uint64_t x, uint64_t to) { return (x + to - 1) / to * to; }

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
            }
        }
        uint32_t max_grid = (pc.platform.tiles - tb_.first_tile - 1) / tb_.core_stride + 1;
        layout_ = std::make_shared<kernel::Layout>(kernel::make_layout(*program_, pc.pe, max_grid));
        lowering_.dma_queues = pc.dma.queues;
        lowering_.descriptor_bytes = pc.pe.dma_descriptor_bytes;
        // Every instance's whole program, checked and counted before anything runs.
        instances_.clear();
        for (uint32_t i = 0; i < layout_->grid; ++i) {
            Instance& in = instances_.emplace_back();
            in.tile = tb_.first_tile + i * tb_.core_stride;
            in.counts = kernel::check_kernel(*program_, *layout_, i, pc.pe, lowering_);
        }
    } catch (const KernelError& e) {
        throw ConfigError(e.what());
    }
}

void KernelTestbench::place_tensors(Platform& p) {
    const HbmConfig& h = p.config.hbm;
    const uint64_t align = h.interleave * h.pseudo_channels;
    std::vector<uint64_t> used(h.stacks, 0);
    uint64_t interleaved = 0;
    for (size_t t = 0; t < program_->tensors.size(); ++t) {
        const kernel::Tensor& tensor = program_->tensors[t];
        kernel::TensorLayout& tl = layout_->tensors[t];
        tl.base.clear();
        uint32_t copies = tensor.per_instance ? layout_->grid : 1;
        for (uint32_t c = 0; c < copies; ++c) {
            uint64_t size = round_up(tl.bytes, align);
            if (tensor.placement == kernel::Placement::Interleaved) {
                if (interleaved + size > p.address_map.total_bytes())
                    throw ConfigError(fmt::format("{}: {}: tensor '{}' ({}) does not fit the interleaved window ({} left)",
                                                  program_->file, tensor.path, tensor.name, format_bytes(tl.bytes),
                                                  format_bytes(p.address_map.total_bytes() - interleaved)));
                tl.base.push_back(p.address_map.interleaved_base() + interleaved);
                interleaved += size;
                continue;
            }
            uint32_t stack = tensor.placement == kernel::Placement::Stack ? tensor.stack
                                                                           : p.local_stack(instances_[c].tile);
            if (stack >= h.stacks)
                throw ConfigError(fmt::format("{}: {}/placement: stack {} but the platform has {} stacks", program_->file,
                                              tensor.path, stack, h.stacks));
            if (used[stack] + size > h.stack_capacity)
                throw ConfigError(fmt::format("{}: {}: tensor '{}' ({}) does not fit HBM stack {} ({} of {} used by the "
                                              "tensors before it)",
                                              program_->file, tensor.path, tensor.name, format_bytes(tl.bytes), stack,
                                              format_bytes(used[stack]), format_bytes(h.stack_capacity)));
            tl.base.push_back(p.stack_address(stack, used[stack]));
            used[stack] += size;
        }
    }
}

void KernelTestbench::build(Platform& p) {
    pe_ = p.config.pe;
    platform_name_ = p.config.platform.name;
    hbm_peak_ = p.config.hbm.stack_bandwidth().bytes_per_s * p.config.hbm.stacks;
    memory_ = MemorySystemNames::of(p);
    place_tensors(p);
    for (size_t i = 0; i < instances_.size(); ++i) {
        Instance& in = instances_[i];
        ProcessingElement& pe = p.tiles[in.tile].pe;
        in.pe = pe.name();
        in.program = kernel::make_kernel_program(program_, layout_, uint32_t(i), pe_, lowering_, in.counts);
        if (instances_.size() > 1)
            in.program.barrier = [this] { barrier(); };
        sc_core::sc_spawn(
            [this, &pe, &in] {
                in.record = pe.execute(in.program);
                in.finished = true;
                ++finished_;
            },
            fmt::format("kernel_instance{}", i).c_str());
    }
}

void KernelTestbench::barrier() {
    uint64_t generation = generation_;
    if (++arrived_ == instances_.size()) {
        arrived_ = 0;
        ++generation_;
        barrier_open_.notify(sc_core::SC_ZERO_TIME);
        return;
    }
    while (generation_ == generation)
        sc_core::wait(barrier_open_);
}

uint64_t KernelTestbench::memory_estimate() const {
    // Per instance: the per-tile stage records, and per unit a lowering (its loop stack and the
    // dependency records, bounded per buffer copy and tensor).
    uint64_t copies = 0;
    if (layout_)
        for (auto& b : layout_->buffers)
            copies += b.bufs;
    uint64_t tensors = program_ ? program_->tensors.size() : 0;
    uint64_t per_lowering = (copies + tensors) * kernel::DependencyTracker::kMaxRecords * 48 + 64 * 1024;
    uint64_t total = 0;
    for (auto& in : instances_)
        total += in.counts.tiles * sizeof(std::array<Interval, kStages>) + kUnits * per_lowering;
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
    double start = 1e300, end = 0;
    for (auto& in : instances_) {
        start = std::min(start, in.record.launch_ns);
        end = std::max(end, in.record.end_ns);
    }
    const double wall = end - start;
    // Per engine: the busiest instance's busy time; every instance's instruction count.
    kernel::KernelCounts total;
    for (auto& in : instances_) {
        for (int u = 0; u < kUnits; ++u)
            total.per_unit[size_t(u)] += in.counts.per_unit[size_t(u)];
        for (auto& [op, n] : in.counts.per_op)
            total.per_op[op] += n;
        total.flops += in.counts.flops;
        for (auto& [d, f] : in.counts.flops_by_dtype)
            total.flops_by_dtype[d] += f;
        total.dma_bytes_in += in.counts.dma_bytes_in;
        total.dma_bytes_out += in.counts.dma_bytes_out;
        total.descriptors += in.counts.descriptors;
        total.instructions += in.counts.instructions;
    }
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
    memory_.add_use(use);
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
    r["wall_ns"] = wall;
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
        per.push_back({{"tile", in.tile}, {"wall_ns", in.record.end_ns - in.record.launch_ns}});
    r["per_instance"] = per;
    return r;
}

std::string KernelTestbench::summary() const {
    nlohmann::json r = results();
    if (r.contains("error"))
        return "kernel " + program_->name + ": " + r["error"].get<std::string>();
    std::string s = fmt::format("kernel {} on {} ({} instance(s)): {} instructions, wall {:.1f} ns\n", program_->name,
                                platform_name_, instances_.size(), r["instructions"].get<uint64_t>(),
                                r["wall_ns"].get<double>());
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
    return s;
}

} // namespace nctlm
