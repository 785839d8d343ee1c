#include "testbenches/collective/collective.h"

#include "models/analytic/collective_model.h"
#include "models/common/stats.h"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <set>

namespace nctlm {

using collective::Algorithm;
using collective::Operation;

const FieldList<CollectiveTestbenchConfig>& CollectiveTestbenchConfig::fields() {
    using C = CollectiveTestbenchConfig;
    static const FieldList<C> f = {
        choice("op", &C::op,
               {{"all_reduce", Operation::AllReduce}, {"all_gather", Operation::AllGather}, {"reduce_scatter", Operation::ReduceScatter},
                {"allr", Operation::AllReduce}, {"allg", Operation::AllGather}, {"redsct", Operation::ReduceScatter}},
               "all_reduce", "the collective (nccom-test's names allr, allg, redsct also work)")
            .setting("what to measure"),
        choice("algorithm", &C::algorithm, {{"ring", Algorithm::Ring}, {"tree", Algorithm::Tree}}, "ring",
               "ring (2(n-1) steps of size/n for all_reduce) or tree (binary tree over the ranks: up, then down)")
            .setting("what to measure"),
        count("ranks", &C::ranks, "2", 2, 4096, "ranks taking part (nccom-test -r)").setting("what to measure"),
        count("ranks_per_chip", &C::ranks_per_chip, "1", 1, 256,
              "ranks on each chip: 1 puts every rank on its own chip (over NeuronLink); ranks_per_chip = ranks keeps "
              "them on one chip's NeuronCores (over the NoC)")
            .setting("where the ranks run"),
        count("first_core", &C::first_core, "0", 0, 255, "the NeuronCore of a chip that runs its first rank")
            .setting("where the ranks run"),
        count("core_stride", &C::core_stride, "1", 1, 255, "a chip's ranks run on first_core + i x core_stride")
            .setting("where the ranks run"),
        count("slices", &C::slices, "2", 1, 4096,
              "each step's chunk is cut into this many slices that pipeline across ranks (tree: per chunk)")
            .documented("intra-node collectives page, Ring ReduceScatter: 'a chunk transmit is divided into two "
                        "sliced transmissions, where the first slice reduction overlaps the second slice "
                        "communication'"),
        bytes("tile_bytes", &C::tile_bytes, "8 KiB", 64, 1 << 20,
              "SBUF bytes per partition of one tile (a tile is 128 partitions of this)")
            .assumed("2 KiB..32 KiB", "no public figure for how CC stages data"),
        count("buffers", &C::buffers, "3", 1, 16, "rotating SBUF copies of each tile buffer")
            .assumed("2..4", "double or triple buffering"),
        bytes("descriptor_bytes", &C::descriptor_bytes, "64 KiB", 512, 1 << 20,
              "DMA descriptor size of the collective's transfers (its DMA packet)")
            .documented("Neuron runtime 'compute-communication overlap': NEURON_RT_DBG_CC_DMA_PACKET_SIZE, "
                        "default and maximum 64 KiB"),
        bytes("flag_bytes", &C::flag_bytes, "64 B", 4, 4096,
              "the write that tells a rank a transfer has landed (a semaphore update over the same path)")
            .assumed("4 B..64 B", "one semaphore write; no public figure"),
    };
    return f;
}

const FieldList<CollectiveWorkload>& CollectiveWorkload::fields() {
    using C = CollectiveWorkload;
    static const FieldList<C> f = {
        bytes("size", &C::size, nullptr, 1, uint64_t(1) << 40,
              "nccom-test's size(B): all_reduce the buffer; all_gather the gathered output; reduce_scatter the input")
            .setting("what to measure"),
        choice("dtype", &C::dtype,
               {{"fp32", Dtype::Fp32}, {"bf16", Dtype::Bf16}, {"fp16", Dtype::Fp16}, {"fp8", Dtype::Fp8}}, "fp32",
               "element type (reductions add elements of it; fp8 moves 1-byte elements as uint8 does)")
            .setting("what to measure"),
    };
    return f;
}

std::vector<CollectiveTestbench::Placement> CollectiveTestbench::place(const CollectiveTestbenchConfig& c,
                                                                       const PlatformConfig& pc) {
    const uint32_t per_chip = std::min(c.ranks_per_chip, c.ranks);
    const uint32_t chips = (c.ranks + per_chip - 1) / per_chip;
    const uint64_t last_core = c.first_core + uint64_t(per_chip - 1) * c.core_stride;
    if (chips > pc.platform.chips || last_core >= pc.platform.tiles)
        throw ConfigError(fmt::format(
            "testbench.ranks={} with ranks_per_chip={} needs {} chip(s) and NeuronCores up to {} per chip, but the "
            "platform has {} chip(s) x {} NeuronCores (ranks > chips x cores)",
            c.ranks, c.ranks_per_chip, chips, last_core, pc.platform.chips, pc.platform.tiles));
    std::vector<uint32_t> order = {0};
    if (pc.platform.chips > 1)
        order = ChipTopology(pc.platform.chips, pc.link).ring_order(chips);
    std::vector<Placement> out;
    for (uint32_t r = 0; r < c.ranks; ++r)
        out.push_back({order[r / per_chip], uint32_t(c.first_core + (r % per_chip) * c.core_stride)});
    return out;
}

void CollectiveTestbench::configure(const ConfigTree& tree) {
    tb_ = tree.load<CollectiveTestbenchConfig>("testbench");
    wl_ = tree.load<CollectiveWorkload>("workload");
    pc_ = PlatformConfig::load(tree);
    placement_ = place(tb_, pc_);
    spec_ = {tb_.op, tb_.algorithm, tb_.ranks, wl_.size, dtype_bytes(wl_.dtype), tb_.slices};
    try {
        collective::Schedule s = collective::make_schedule(spec_);
        collective::ProgramOptions o{tb_.tile_bytes, tb_.buffers, tb_.descriptor_bytes, pc_.dma.queues, wl_.dtype};
        if (collective::sbuf_bytes_needed(s, o) > pc_.pe.sbuf_partition_bytes)
            throw ConfigError(fmt::format("{}: the collective's tiles need {} per SBUF partition ({} buffers of "
                                          "testbench.tile_bytes); the platform has {}",
                                          tree.where("testbench", "tile_bytes"),
                                          format_bytes(collective::sbuf_bytes_needed(s, o)), tb_.buffers,
                                          format_bytes(pc_.pe.sbuf_partition_bytes)));
    } catch (const std::invalid_argument& e) {
        throw ConfigError(tree.where("workload", "size") + ": " + e.what());
    }
}

uint64_t CollectiveTestbench::memory_estimate() const {
    // The schedule's transfers and every rank's instructions (a few per SBUF tile).
    uint64_t per_rank_bytes = spec_.op == Operation::AllReduce ? 2 * spec_.bytes : spec_.bytes;
    uint64_t tiles = per_rank_bytes / std::max<uint64_t>(1, 128 * tb_.tile_bytes) + 1;
    return uint64_t(spec_.ranks) * (tiles * 4 * sizeof(Instruction) + 64 * 1024);
}

void CollectiveTestbench::build(Platform& p) {
    collective::Schedule s = collective::make_schedule(spec_);
    // Each rank's buffers in the HBM stack next to its NeuronCore, ranks sharing a stack one after
    // another, each buffer aligned to a whole interleave round.
    const HbmConfig& h = p.config.hbm;
    const uint64_t align = h.interleave * h.pseudo_channels;
    auto round_up = [align](uint64_t b) { return (b + align - 1) / align * align; };
    const uint64_t flags = 64 * tb_.flag_bytes;
    const uint64_t per_rank =
        round_up(s.input_bytes) + round_up(s.output_bytes) + round_up(s.scratch_bytes) + round_up(flags);
    std::map<std::pair<uint32_t, uint32_t>, uint64_t> used;  // (chip, stack) -> bytes
    std::vector<collective::RankMemory> memory;
    std::vector<ProcessingElement*> pes;
    for (const Placement& pl : placement_) {
        uint32_t stack = p.local_stack(pl.tile);
        uint64_t& u = used[{pl.chip, stack}];
        if (u + per_rank > h.stack_capacity)
            throw ConfigError(fmt::format("the collective's buffers ({} per rank: input, output, scratch, flags) do "
                                          "not fit HBM stack {} of chip {} ({})",
                                          format_bytes(per_rank), stack, pl.chip, format_bytes(h.stack_capacity)));
        uint64_t base = p.stack_address(pl.chip, stack, u);
        collective::RankMemory m;
        m.input = base;
        m.output = m.input + round_up(s.input_bytes);
        m.scratch = m.output + round_up(s.output_bytes);
        m.flags = m.scratch + round_up(s.scratch_bytes);
        memory.push_back(m);
        u += per_rank;
        pes.push_back(&p.chip(pl.chip).tiles[pl.tile].pe);
    }
    collective::ProgramOptions o{tb_.tile_bytes, tb_.buffers, tb_.descriptor_bytes, p.config.dma.queues, wl_.dtype};
    run_ = std::make_unique<collective::CollectiveRun>(std::move(s), std::move(memory), std::move(pes), o,
                                                       tb_.flag_bytes);
    link_names_.clear();
    for (auto& l : p.links)
        for (const char* d : {"a_to_b", "b_to_a"})
            link_names_.push_back(std::string(l->name()) + "." + d);
    run_->start();
}

nlohmann::json CollectiveTestbench::results() const {
    nlohmann::json r;
    const double t_ns = run_->end_ns() - run_->start_ns();
    const double size = double(spec_.bytes), factor = collective::bus_factor(spec_.op, spec_.ranks);
    const double algbw = t_ns > 0 ? size / (t_ns * 1e-9) : 0;  // B/s
    std::set<uint32_t> chips;
    for (auto& pl : placement_)
        chips.insert(pl.chip);
    r["op"] = collective::op_name(spec_.op);
    r["algorithm"] = collective::algorithm_name(spec_.algorithm);
    r["ranks"] = spec_.ranks;
    r["chips"] = chips.size();
    r["ranks_per_chip"] = std::min(tb_.ranks_per_chip, tb_.ranks);
    r["size_bytes"] = spec_.bytes;
    r["dtype"] = dtype_name(wl_.dtype);
    r["count_elems"] = spec_.bytes / spec_.elem_bytes;
    r["time_ns"] = t_ns;
    r["time_us"] = t_ns / 1e3;
    // nccom-test prints "GB/s" that are GiB/s (NCCOM-TEST User Guide, output description).
    r["algbw_gib_per_s"] = algbw / double(1ull << 30);
    r["busbw_gib_per_s"] = algbw * factor / double(1ull << 30);
    r["algbw_gb_per_s"] = algbw / 1e9;
    r["busbw_gb_per_s"] = algbw * factor / 1e9;
    r["bus_factor"] = factor;
    const collective::Schedule& s = run_->schedule();
    r["steps"] = s.steps;
    r["slices"] = spec_.slices;
    r["chunk_bytes"] = s.chunk_bytes;
    r["transfers"] = s.transfers.size();
    uint64_t remote = 0;
    for (auto& t : s.transfers)
        for (auto& d : t.dests)
            remote += d.rank != t.rank ? t.bytes : 0;
    r["bytes_sent_between_ranks"] = remote;
    r["flags_sent"] = run_->flags_sent();
    nlohmann::json ranks = nlohmann::json::array();
    for (uint32_t k = 0; k < spec_.ranks; ++k) {
        const auto& rec = run_->records()[k];
        const auto& prog = run_->program(k);
        ranks.push_back({{"rank", k},
                         {"chip", placement_[k].chip},
                         {"core", placement_[k].tile},
                         {"end_ns", rec.end_ns},
                         {"loads", prog.loads},
                         {"stores", prog.stores},
                         {"adds", prog.adds}});
    }
    r["per_rank"] = ranks;
    double busiest = 0;
    std::string busiest_name;
    nlohmann::json links = nlohmann::json::object();
    for (auto& n : link_names_) {
        double u = stats().value(n + ".utilization");
        double b = stats().value(n + ".bytes");
        if (b > 0)
            links[n] = {{"bytes", b}, {"utilization", u}};
        if (u > busiest) {
            busiest = u;
            busiest_name = n;
        }
    }
    r["links"] = links;
    // A ring with one rank per chip moves each step's chunk over one link: the closed form's bound
    // (no latency) next to the simulated figure, for comparison only.
    if (spec_.algorithm == collective::Algorithm::Ring && std::min(tb_.ranks_per_chip, tb_.ranks) == 1 &&
        pc_.platform.chips > 1) {
        auto f = analytic::ring_closed_form(spec_.op, spec_.ranks, spec_.bytes, pc_.link.wire_bandwidth.bytes_per_s, 0);
        r["link_bound"] = {{"time_us", f.time_ns / 1e3},
                           {"busbw_gib_per_s", f.busbw / double(1ull << 30)},
                           {"busbw_gb_per_s", f.busbw / 1e9},
                           {"fraction", f.time_ns / t_ns}};
    }
    if (!busiest_name.empty())
        r["busiest_link"] = {{"name", busiest_name}, {"utilization", busiest}};
    return r;
}

std::string CollectiveTestbench::summary() const {
    nlohmann::json r = results();
    std::string s = fmt::format("{} {} over {} ranks ({} chip(s) x {} per chip)\n", r["op"].get<std::string>(),
                                r["algorithm"].get<std::string>(), spec_.ranks, r["chips"].get<size_t>(),
                                r["ranks_per_chip"].get<uint32_t>());
    s += fmt::format("{:>14} {:>14} {:>6} {:>12} {:>12} {:>12}   (GB/s as nccom-test: GiB/s)\n", "size(B)",
                     "count(elems)", "type", "time(us)", "algbw(GB/s)", "busbw(GB/s)");
    s += fmt::format("{:>14} {:>14} {:>6} {:>12.2f} {:>12.2f} {:>12.2f}\n", spec_.bytes,
                     r["count_elems"].get<uint64_t>(), r["dtype"].get<std::string>(), r["time_us"].get<double>(),
                     r["algbw_gib_per_s"].get<double>(), r["busbw_gib_per_s"].get<double>());
    if (r.contains("link_bound"))
        s += fmt::format("link bound (closed form, no latency): busbw {:.2f} GiB/s; the simulation reaches {:.0f} %\n",
                         r["link_bound"]["busbw_gib_per_s"].get<double>(),
                         100 * r["link_bound"]["fraction"].get<double>());
    if (r.contains("busiest_link"))
        s += fmt::format("busiest link: {} ({:.1f} % busy)\n", r["busiest_link"]["name"].get<std::string>(),
                         100 * r["busiest_link"]["utilization"].get<double>());
    return s;
}

} // namespace nctlm
