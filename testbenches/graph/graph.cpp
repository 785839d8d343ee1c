#include "testbenches/graph/graph.h"

#include "models/common/sim.h"
#include "models/common/trace.h"
#include "models/noc/topology.h"
#include "models/pe/processing_element.h"
#include "models/common/units.h"

#include <algorithm>
#include <cctype>
#include <fmt/format.h>
#include <map>

namespace nctlm {

using graph::GraphError;

const FieldList<GraphTestbenchConfig>& GraphTestbenchConfig::fields() {
    static const FieldList<GraphTestbenchConfig> f = {};
    return f;
}

namespace {
const char* const kEngineNames[GraphTestbench::kEngines] = {"tensor", "vector", "scalar", "dma issue"};
const char* const kEngineStats[GraphTestbench::kEngines] = {".tensor.busy_ns", ".vector.busy_ns", ".scalar.busy_ns",
                                                            ".dma_issue_busy_ns"};

// The op's name with its layer number as '*' ("l3.q_proj" -> "l*.q_proj", "layer.3/query" ->
// "layer.*/query"): the rows of the per-layer summary.
std::string in_layer(const graph::GraphOp& op) {
    if (op.layer < 0)
        return op.name;
    const std::string n = std::to_string(op.layer);
    for (size_t at = op.name.find(n); at != std::string::npos; at = op.name.find(n, at + 1)) {
        bool before = at > 0 && std::isdigit(static_cast<unsigned char>(op.name[at - 1]));
        bool after = at + n.size() < op.name.size() && std::isdigit(static_cast<unsigned char>(op.name[at + n.size()]));
        if (!before && !after)
            return op.name.substr(0, at) + "*" + op.name.substr(at + n.size());
    }
    return op.name;
}
} // namespace

// Under flow, two ranks whose tensors share an HBM stack are refused (docs/performance.md, "What
// flow refuses"). Their weight shards are two sequential streams through the same pseudo-channels:
// flow charges them the table's two-stream loss (FlowTable::shared_fraction, 85 % of one stream on
// trn2, measured with other regions than the graph's shards) where AT loses almost nothing, and
// oldest-first sharing serves one rank ahead of the other where AT interleaves their requests
// (llama-3.1-8b decode layer, tp 2 on trn2: +19.8 %; without the sharing fraction +4.3 %, and fair
// sharing too -2.5 %). Ranks in stacks of their own are within 0.4 % (mlp_tp2 on cores 0 and 2).
void GraphTestbench::refuse_ranks_sharing_a_stack_under_flow(const ConfigTree& tree) const {
    if (pc_.sim.timing != TimingMode::Flow)
        return;
    for (size_t i = 0; i < rank_stack_.size(); ++i)
        for (size_t j = 0; j < i; ++j)
            if (rank_stack_[i] == rank_stack_[j])
                throw ConfigError(tree.where("sim", "timing") +
                                  fmt::format(": testbench 'graph' does not run under sim.timing: flow when two ranks' "
                                              "tensors share an HBM stack (ranks {} and {}: cores {} and {}): flow "
                                              "charges their two streams a pseudo-channel's row conflicts and serves one rank "
                                              "ahead of the other, 14-20 % above AT on trn2; place the ranks on cores of "
                                              "different stacks or run it with --timing at or lt",
                                              j, i, graph_.placement.cores[j], graph_.placement.cores[i]));
}

void GraphTestbench::configure(const ConfigTree& tree) {
    tree.load<GraphTestbenchConfig>("testbench");
    if (file_.empty())
        throw ConfigError("testbench 'graph' needs an op graph: -w GRAPH.json (docs/models.md), e.g. from "
                          "`nctlm model --hf-config llama-3.1-8b ... -o graph.json` or `nctlm import-onnx`");
    pc_ = PlatformConfig::load(tree);
    try {
        graph_ = graph::Graph::load(file_);
        graph::KernelLibrary library;
        lowering_ = graph::lower_graph(graph_, pc_, library);
        // Each rank's tensors in the stack next to its core, on its chip (stacks numbered over the
        // platform: chip x stacks + stack).
        Topology topo(pc_.platform.tiles, pc_.hbm.stacks);
        graph::HbmTarget target;
        for (uint32_t i = 0; i < graph_.placement.ranks(); ++i)
            target.rank_stack.push_back(graph_.placement.chip(i) * pc_.hbm.stacks +
                                        topo.router_of_tile(graph_.placement.cores[i]));
        target.stacks = pc_.platform.chips * pc_.hbm.stacks;
        target.capacity = pc_.hbm.stack_capacity;
        target.align = uint64_t(pc_.hbm.interleave) * pc_.hbm.pseudo_channels;
        rank_stack_ = target.rank_stack;
        plan_ = graph::plan_hbm(graph_, lowering_, target);
    } catch (const GraphError& e) {
        throw ConfigError(e.what());
    }
    refuse_ranks_sharing_a_stack_under_flow(tree);
    const graph::Placement& pl = graph_.placement;
    launches_.assign(lowering_.ops.size(), {});
    for (size_t p = 0; p < lowering_.ops.size(); ++p)
        for (auto& call : lowering_.ops[p].calls) {
            std::vector<KernelLaunch> per_replica;
            for (uint32_t d = 0; d < pl.dp; ++d) {
                std::vector<uint32_t> tiles(pl.cores.begin() + d * pl.tp, pl.cores.begin() + (d + 1) * pl.tp);
                per_replica.emplace_back(call.program, pc_, tiles);
            }
            launches_[p].push_back(std::move(per_replica));
        }
    ranks_.clear();
    groups_.clear();
    for (uint32_t d = 0; d < pl.dp; ++d) {
        groups_.emplace_back().size = pl.tp;
        for (uint32_t i = 0; i < pl.tp; ++i) {
            Rank& r = ranks_.emplace_back();
            r.core = pl.cores[d * pl.tp + i];
            r.chip = pl.chip(d * pl.tp + i);
            r.replica = d;
            r.index = i;
            r.ops.resize(lowering_.ops.size());
        }
    }
}

void GraphTestbench::build(Platform& p) {
    const graph::Placement& pl = graph_.placement;
    platform_ = &p;
    stack_peak_ = p.config.hbm.stack_bandwidth().bytes_per_s / 1e9;
    dma_peak_ = double(p.config.dma.engines) * p.config.dma.engine_bandwidth.bytes_per_s / 1e9;
    // Every kernel call's tensors at the graph's addresses.
    for (size_t op = 0; op < lowering_.ops.size(); ++op)
        for (size_t c = 0; c < lowering_.ops[op].calls.size(); ++c) {
            const graph::KernelCall& call = lowering_.ops[op].calls[c];
            for (uint32_t d = 0; d < pl.dp; ++d) {
                std::vector<std::vector<uint64_t>> bases;
                for (auto& b : call.binds) {
                    std::vector<uint64_t> at;
                    for (uint32_t i = 0; i < pl.tp; ++i) {
                        uint32_t rank = d * pl.tp + i;
                        uint64_t offset = b.tensor >= 0 ? plan_.tensor[size_t(b.tensor)][rank] + b.offset
                                                        : plan_.scratch[op][c][size_t(b.scratch)][rank];
                        const uint32_t stacks = p.config.hbm.stacks;
                        at.push_back(p.stack_address(rank_stack_[rank] / stacks, rank_stack_[rank] % stacks, offset));
                    }
                    bases.push_back(at);
                }
                launches_[op][c][d].place_at(bases);
            }
        }
    for (size_t i = 0; i < ranks_.size(); ++i) {
        Rank& r = ranks_[i];
        Chip& chip = p.chip(r.chip);
        std::string pe = chip.tiles[r.core].pe.name();
        for (int e = 0; e < kEngines; ++e)
            r.busy[size_t(e)] = &stats().counter(pe + kEngineStats[e], "ns");
        std::string hbm = chip.hbm[rank_stack_[i] % p.config.hbm.stacks]->name(), dma = chip.tiles[r.core].dma.name();
        r.hbm_read = &stats().counter(hbm + ".bytes_read", "B");
        r.hbm_written = &stats().counter(hbm + ".bytes_written", "B");
        r.dma_read = &stats().counter(dma + ".bytes_read", "B");
        r.dma_written = &stats().counter(dma + ".bytes_written", "B");
        if (trace().enabled())
            r.track = trace().track(p.chips() > 1 ? fmt::format("graph chip {} core {}", r.chip, r.core)
                                                  : fmt::format("graph core {}", r.core),
                                    "ops");
        sc_core::sc_spawn([this, &p, &r] { run_rank(p, r); },
                          fmt::format("graph_rank{}", p.chips() > 1 ? fmt::format("{}_{}", r.chip, r.core)
                                                                    : std::to_string(r.core))
                              .c_str());
    }
}

void GraphTestbench::run_rank(Platform& p, Rank& r) {
    ProcessingElement& pe = p.chip(r.chip).tiles[r.core].pe;
    Group& group = groups_[r.replica];
    for (size_t op = 0; op < lowering_.ops.size(); ++op) {
        OpRecord& rec = r.ops[op];
        rec.start = now_ns();
        std::array<double, kEngines> busy0{};
        for (int e = 0; e < kEngines; ++e)
            busy0[size_t(e)] = r.busy[size_t(e)]->value;
        double hbm0 = r.hbm_read->value + r.hbm_written->value, dma0 = r.dma_read->value + r.dma_written->value;
        for (size_t c = 0; c < launches_[op].size(); ++c) {
            Program program = launches_[op][c][r.replica].pe_program(r.index);
            program.launched = op == 0 && c == 0;  // one launch per step: the ops run back to back
            if (lowering_.ops[op].calls[c].collective)
                program.barrier = [this, &group] { barrier(group); };
            pe.execute(program);
        }
        rec.end = now_ns();
        for (int e = 0; e < kEngines; ++e)
            rec.busy[size_t(e)] = r.busy[size_t(e)]->value - busy0[size_t(e)];
        rec.hbm_bytes = r.hbm_read->value + r.hbm_written->value - hbm0;
        rec.dma_bytes = r.dma_read->value + r.dma_written->value - dma0;
        if (r.track >= 0) {
            const graph::GraphOp& gop = graph_.ops[size_t(lowering_.ops[op].op)];
            SpanArgs a;
            a.command = gop.spec().name;
            a.tile = int32_t(r.core);
            a.bandwidth = false;
            trace().span(r.track, gop.name.c_str(), rec.start, rec.end, a);
        }
    }
    r.finished = true;
    ++finished_;
}

void GraphTestbench::barrier(Group& g) {
    uint64_t generation = g.generation;
    if (++g.arrived == g.size) {
        g.arrived = 0;
        ++g.generation;
        g.open.notify(sc_core::SC_ZERO_TIME);
        return;
    }
    while (g.generation == generation)
        sc_core::wait(g.open);
}

uint64_t GraphTestbench::memory_estimate() const {
    // Per kernel launch: its layout and counts; per rank and op: a record; per unit of a running
    // program: a lowering's dependency records (as the kernel testbench counts them).
    uint64_t launches = 0, copies = 0;
    for (auto& per_op : launches_)
        for (auto& per_call : per_op)
            for (auto& l : per_call) {
                ++launches;
                uint64_t c = 0;
                for (auto& b : l.layout().buffers)
                    c += b.bufs;
                copies = std::max(copies, c + l.program().tensors.size());
            }
    uint64_t per_lowering = copies * kernel::DependencyTracker::kMaxRecords * 48 + 64 * 1024;
    return launches * 4096 + ranks_.size() * (lowering_.ops.size() * sizeof(OpRecord) + kUnits * per_lowering);
}

size_t GraphTestbench::critical_rank() const {
    size_t best = 0;
    for (size_t i = 0; i < ranks_.size(); ++i)
        if (!ranks_[i].ops.empty() && ranks_[i].ops.back().end > ranks_[best].ops.back().end)
            best = i;
    return best;
}

nlohmann::json GraphTestbench::results() const {
    using json = nlohmann::json;
    json r;
    r["graph"] = graph_.name;
    r["file"] = file_;
    r["platform"] = pc_.platform.name;
    r["phase"] = graph_.phase;
    r["placement"] = {{"tp", graph_.placement.tp},
                      {"dp", graph_.placement.dp},
                      {"cores", graph_.placement.cores},
                      {"chips", graph_.placement.chips}};
    if (finished_ != ranks_.size()) {
        r["error"] = "the graph did not finish";
        return r;
    }
    const size_t crit = critical_rank();
    const Rank& cr = ranks_[crit];
    const double total = lowering_.ops.empty() ? 0 : cr.ops.back().end;
    r["latency_ns"] = total;
    r["critical_core"] = cr.core;
    const double tokens = double(graph_.tokens) * graph_.placement.dp;
    if (graph_.tokens > 0 && total > 0) {
        r["tokens"] = tokens;
        r["tokens_per_s"] = tokens / (total * 1e-9);
        if (graph_.phase == "decode")
            r["per_token_latency_ns"] = total;  // one step: every sequence of the batch gets its next token
    }
    json ops = json::array(), collectives = json::array();
    std::map<std::string, double> by_type;
    double collective_ns = 0, flops_total = 0;
    for (size_t p = 0; p < lowering_.ops.size(); ++p) {
        const graph::LoweredOp& lo = lowering_.ops[p];
        const graph::GraphOp& gop = graph_.ops[size_t(lo.op)];
        const OpRecord& rec = cr.ops[p];
        const double t = rec.end - rec.start;
        double slowest = 0;
        for (auto& rk : ranks_)
            slowest = std::max(slowest, rk.ops[p].end - rk.ops[p].start);
        double flops = 0, bytes = 0;
        std::string kernels;
        uint64_t instructions = 0;
        for (size_t c = 0; c < launches_[p].size(); ++c) {
            for (auto& l : launches_[p][c])
                for (uint32_t i = 0; i < l.instances(); ++i) {
                    flops += l.counts(i).flops;
                    bytes += double(l.counts(i).dma_bytes_in + l.counts(i).dma_bytes_out);
                    instructions += l.counts(i).instructions;
                }
            std::string k = lo.calls[c].kernel;
            if (kernels.find(k) == std::string::npos)
                kernels += (kernels.empty() ? "" : " ") + k;
        }
        flops_total += flops;
        // The bound: the busiest of the critical rank's engines, its DMA engines and its HBM stack.
        std::string bound = "-";
        double most = 0;
        if (t > 0 && !lo.calls.empty()) {
            for (int e = 0; e < kEngines; ++e)
                if (rec.busy[size_t(e)] / t > most) {
                    most = rec.busy[size_t(e)] / t;
                    bound = kEngineNames[e];
                }
            if (rec.dma_bytes / (dma_peak_ * t) > most) {
                most = rec.dma_bytes / (dma_peak_ * t);
                bound = "dma";
            }
            if (rec.hbm_bytes / (stack_peak_ * t) > most) {
                most = rec.hbm_bytes / (stack_peak_ * t);
                bound = "hbm";
            }
            if (lo.collective.present && most < 0.5)
                bound = "latency";  // waits: barriers, DMA start latencies
        }
        json row = {{"name", gop.name},
                    {"op", gop.spec().name},
                    {"layer", gop.layer},
                    {"kernels", kernels.empty() ? "(none: an alias)" : kernels},
                    {"time_ns", t},
                    {"slowest_rank_ns", slowest},
                    {"share", total > 0 ? t / total : 0},
                    {"bound", bound},
                    {"bound_utilization", most},
                    {"flops", flops},
                    {"bytes", bytes},
                    {"tflops", t > 0 ? flops / t / 1e3 : 0},
                    {"gb_per_s", t > 0 ? bytes / t : 0},
                    {"instructions", instructions}};
        if (!lo.calls.empty())
            row["tiling"] = lo.calls[0].tiling;
        ops.push_back(row);
        by_type[gop.spec().name] += t;
        if (lo.collective.present) {
            const graph::CollectiveSpec& s = lo.collective.spec;
            double algbw = t > 0 ? double(lo.collective.bytes) / t : 0;
            collectives.push_back({{"name", gop.name},
                                   {"op", graph::collective_name(s.kind)},
                                   {"algorithm", s.algorithm},
                                   {"ranks", s.ranks},
                                   {"steps", lo.collective.steps},
                                   {"bytes", lo.collective.bytes},
                                   {"time_ns", t},
                                   {"algbw_gb_per_s", algbw},
                                   {"busbw_gb_per_s", algbw * graph::bus_factor(s.kind, s.ranks)}});
            collective_ns += t;
        }
    }
    r["ops"] = ops;
    r["time_by_op_type_ns"] = by_type;
    r["collectives"] = collectives;
    r["collective_time_ns"] = collective_ns;
    r["collective_share"] = total > 0 ? collective_ns / total : 0;
    r["flops"] = flops_total;
    r["tflops"] = total > 0 ? flops_total / total / 1e3 : 0;
    json cores = json::array();
    for (auto& rk : ranks_) {
        json busy = json::object(), util = json::object();
        for (int e = 0; e < kEngines; ++e) {
            double b = 0;
            for (auto& rec : rk.ops)
                b += rec.busy[size_t(e)];
            busy[kEngineNames[e]] = b;
            util[kEngineNames[e]] = total > 0 ? b / total : 0;
        }
        cores.push_back({{"chip", rk.chip}, {"core", rk.core}, {"replica", rk.replica}, {"rank", rk.index}, {"busy_ns", busy}, {"utilization", util},
                         {"end_ns", rk.ops.empty() ? 0.0 : rk.ops.back().end}});
    }
    r["cores"] = cores;
    r["chips"] = chip_results(total);
    r["links"] = link_results(total);
    json stacks = json::array();
    for (size_t s = 0; s < plan_.peak.size(); ++s) {
        if (pc_.platform.chips > 1 && plan_.peak[s] == 0)
            continue;  // a multi-chip platform: only the stacks the graph uses
        stacks.push_back({{"chip", s / pc_.hbm.stacks},
                          {"stack", s % pc_.hbm.stacks},
                          {"persistent_bytes", plan_.persistent[s]},
                          {"peak_bytes", plan_.peak[s]}});
    }
    r["hbm"] = stacks;
    int layers = 0;
    for (auto& o : graph_.ops)
        layers = std::max(layers, o.layer + 1);
    r["layers"] = {{"model", graph_.layers}, {"in_graph", layers}, {"simulated", layers},
                   {"note", "every layer in the graph is simulated (no layer is multiplied)"}};
    return r;
}

// Per chip of the placement: its ranks' engines, busy time summed and utilization averaged over them.
nlohmann::json GraphTestbench::chip_results(double total_ns) const {
    std::map<uint32_t, std::vector<const Rank*>> by_chip;
    for (auto& rk : ranks_)
        by_chip[rk.chip].push_back(&rk);
    nlohmann::json chips = nlohmann::json::array();
    for (auto& [chip, ranks] : by_chip) {
        nlohmann::json busy = nlohmann::json::object(), util = nlohmann::json::object();
        double all = 0;
        for (int e = 0; e < kEngines; ++e) {
            double b = 0;
            for (const Rank* rk : ranks)
                for (auto& rec : rk->ops)
                    b += rec.busy[size_t(e)];
            busy[kEngineNames[e]] = b;
            util[kEngineNames[e]] = total_ns > 0 ? b / (total_ns * double(ranks.size())) : 0;
            all += b;
        }
        std::vector<uint32_t> cores;
        for (const Rank* rk : ranks)
            cores.push_back(rk->core);
        chips.push_back({{"chip", chip},
                         {"cores", cores},
                         {"busy_ns", busy},
                         {"utilization", util},
                         {"engine_utilization", total_ns > 0 ? all / (total_ns * kEngines * double(ranks.size())) : 0}});
    }
    return chips;
}

// Every NeuronLink direction that carried bytes during the step (cable c x ports/2 + k joins chip
// c's port 2k to its neighbour: direction a_to_b leaves chip c).
nlohmann::json GraphTestbench::link_results(double total_ns) const {
    nlohmann::json links = nlohmann::json::array();
    const ChipTopology* topo = platform_ ? platform_->chip_topology() : nullptr;
    if (!topo)
        return links;
    const uint32_t half = topo->ports() / 2;
    for (size_t l = 0; l < platform_->links.size(); ++l) {
        const uint32_t a = uint32_t(l / half), b = topo->neighbor(a, 2 * uint32_t(l % half));
        for (int dir = 0; dir < 2; ++dir) {
            const LinkTiming& t = platform_->links[l]->timing(dir);
            if (t.bytes() == 0)
                continue;
            links.push_back({{"link", platform_->links[l]->basename()},
                             {"direction", dir == 0 ? "a_to_b" : "b_to_a"},
                             {"from_chip", dir == 0 ? a : b},
                             {"to_chip", dir == 0 ? b : a},
                             {"bytes", t.bytes()},
                             {"busy_ns", t.busy_ns()},
                             {"utilization", total_ns > 0 ? t.busy_ns() / total_ns : 0},
                             {"gb_per_s", total_ns > 0 ? t.bytes() / total_ns : 0}});
        }
    }
    return links;
}

std::string GraphTestbench::summary() const {
    nlohmann::json r = results();
    if (r.contains("error"))
        return "graph " + graph_.name + ": " + r["error"].get<std::string>();
    const double total = r["latency_ns"].get<double>();
    std::string s = fmt::format("graph {} on {} (tp {} x dp {}, cores", graph_.name, pc_.platform.name, graph_.placement.tp,
                                graph_.placement.dp);
    for (uint32_t c : graph_.placement.cores)
        s += fmt::format(" {}", c);
    if (pc_.platform.chips > 1) {
        s += ", chips";
        for (uint32_t c : graph_.placement.chips)
            s += fmt::format(" {}", c);
    }
    s += fmt::format("): {} ops, {} kernel calls\n", graph_.ops.size(), [&] {
        size_t n = 0;
        for (auto& lo : lowering_.ops)
            n += lo.calls.size();
        return n;
    }());
    s += fmt::format("  latency {:.1f} us", total / 1e3);
    if (r.contains("per_token_latency_ns"))
        s += fmt::format(" per token (one decode step of the batch)");
    if (r.contains("tokens_per_s"))
        s += fmt::format(", {:.0f} tokens/s ({:.0f} tokens)", r["tokens_per_s"].get<double>(), r["tokens"].get<double>());
    s += fmt::format(", {:.2f} TFLOPS\n", r["tflops"].get<double>());
    // The per-op table; a graph of many layers is shown per op of a layer, summed over the layers.
    struct Row {
        std::string name, op, bound, kernels;
        double t = 0, flops = 0, bytes = 0;
        int n = 0;
    };
    std::vector<Row> rows;
    std::map<std::string, size_t> index;
    bool per_layer = r["ops"].size() > 40;
    for (size_t p = 0; p < r["ops"].size(); ++p) {
        const auto& o = r["ops"][p];
        const graph::GraphOp& gop = graph_.ops[size_t(lowering_.ops[p].op)];
        std::string key = per_layer ? in_layer(gop) : gop.name;
        auto it = index.find(key);
        if (it == index.end()) {
            it = index.emplace(key, rows.size()).first;
            rows.push_back({key, o["op"], o["bound"], o["kernels"]});
        }
        Row& row = rows[it->second];
        row.t += o["time_ns"].get<double>();
        row.flops += o["flops"].get<double>();
        row.bytes += o["bytes"].get<double>();
        ++row.n;
    }
    s += fmt::format("  {:<28} {:<16} {:>11} {:>6} {:<9} {:>10} {:>10} {:>8} {:>8}\n",
                     per_layer ? "op (summed over layers)" : "op", "kind", "time us", "share", "bound", "GFLOP", "MB",
                     "TFLOPS", "GB/s");
    for (auto& row : rows)
        s += fmt::format("  {:<28} {:<16} {:>11.2f} {:>5.1f}% {:<9} {:>10.3f} {:>10.3f} {:>8.2f} {:>8.1f}\n",
                         row.n > 1 ? fmt::format("{} x{}", row.name, row.n) : row.name, row.op, row.t / 1e3,
                         total > 0 ? 100 * row.t / total : 0, row.bound, row.flops / 1e9, row.bytes / 1e6,
                         row.t > 0 ? row.flops / row.t / 1e3 : 0, row.t > 0 ? row.bytes / row.t : 0);
    s += "  time by op type:";
    for (auto& [k, v] : r["time_by_op_type_ns"].items())
        s += fmt::format(" {} {:.1f}%", k, total > 0 ? 100 * v.get<double>() / total : 0);
    s += "\n";
    if (!r["collectives"].empty()) {
        double bytes = 0, t = 0, bus = 0;
        for (auto& c : r["collectives"]) {
            bytes += c["bytes"].get<double>();
            t += c["time_ns"].get<double>();
            bus = std::max(bus, c["busbw_gb_per_s"].get<double>());
        }
        s += fmt::format("  collectives: {} ops, {:.1f} us ({:.1f}% of the step), {} moved per rank, bus bandwidth up to "
                         "{:.1f} GB/s\n",
                         r["collectives"].size(), t / 1e3, 100 * r["collective_share"].get<double>(),
                         format_bytes(uint64_t(bytes)), bus);
    }
    s += "  per core utilization (tensor/vector/scalar/dma issue):";
    for (auto& c : r["cores"])
        s += fmt::format(" core {} {:.0f}/{:.0f}/{:.0f}/{:.0f}%",
                         pc_.platform.chips > 1 ? fmt::format("{}.{}", c["chip"].get<uint32_t>(), c["core"].get<uint32_t>())
                                                : std::to_string(c["core"].get<uint32_t>()),
                         100 * c["utilization"]["tensor"].get<double>(), 100 * c["utilization"]["vector"].get<double>(),
                         100 * c["utilization"]["scalar"].get<double>(), 100 * c["utilization"]["dma issue"].get<double>());
    if (pc_.platform.chips > 1) {
        s += "\n  per chip utilization (tensor/vector/scalar/dma issue, mean of its cores):";
        for (auto& c : r["chips"])
            s += fmt::format(" chip {} {:.0f}/{:.0f}/{:.0f}/{:.0f}%", c["chip"].get<uint32_t>(),
                             100 * c["utilization"]["tensor"].get<double>(), 100 * c["utilization"]["vector"].get<double>(),
                             100 * c["utilization"]["scalar"].get<double>(),
                             100 * c["utilization"]["dma issue"].get<double>());
        s += "\n  NeuronLink (bytes, utilization of the step):";
        if (r["links"].empty())
            s += " none used";
        for (auto& l : r["links"])
            s += fmt::format(" {} {}->{} {} {:.1f}%", l["link"].get<std::string>(), l["from_chip"].get<uint32_t>(),
                             l["to_chip"].get<uint32_t>(), format_bytes(uint64_t(l["bytes"].get<double>())),
                             100 * l["utilization"].get<double>());
    }
    s += "\n  hbm per stack (persistent / peak):";
    for (auto& h : r["hbm"])
        s += fmt::format(" {} {}/{}",
                         pc_.platform.chips > 1 ? fmt::format("{}.{}", h["chip"].get<size_t>(), h["stack"].get<size_t>())
                                                : std::to_string(h["stack"].get<size_t>()), format_bytes(h["persistent_bytes"].get<uint64_t>()),
                         format_bytes(h["peak_bytes"].get<uint64_t>()));
    s += fmt::format("\n  layers: {}", r["layers"]["note"].get<std::string>());
    return s;
}

} // namespace nctlm
