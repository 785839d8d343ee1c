#include "testbenches/gqa/gqa.h"

#include "testbenches/gqa/gqa_kernel.h"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <optional>

namespace nctlm {

const FieldList<GqaWorkload>& GqaWorkload::fields() {
    using C = GqaWorkload;
    static const FieldList<C> f = {
        text("name", &C::name, "gqa", "case name, echoed in results"),
        text("model", &C::model, "Llama-3.1-8B", "model whose attention shape this is (for the record)"),
        count("query_heads", &C::query_heads, "32", 1, 1024, "query heads (Llama-3.1-8B: 32, 70B: 64)"),
        count("kv_heads", &C::kv_heads, "8", 1, 1024, "key/value heads (Llama-3.1: 8)"),
        count("head_dim", &C::head_dim, "128", 1, 128, "head dimension (Llama-3.1: 128)"),
        count("context", &C::context, "8192", 128, 1ull << 24, "tokens in the KV cache"),
        text("dtype", &C::dtype, "bf16", "element type of Q, K, V and O (bf16|fp16|fp8|fp32)"),
        count("tile_tokens", &C::tile_tokens, "128", 1, 512, "tokens per K/V tile (one 32 KiB descriptor)"),
        count("block_tokens", &C::block_tokens, "2048", 128, 1 << 20,
              "tokens per pipeline step: one DMA instruction for K and one for V"),
        count("buffers", &C::buffers, "4", 1, 64, "K/V blocks in flight per tile (SBUF buffers)"),
        text("kv_placement", &C::kv_placement, "local",
             "local: each tile's slice in its local stack; interleaved: the stack-interleaved window"),
    };
    return f;
}

void GqaTestbench::configure(const ConfigTree& tree) {
    cfg_ = tree.load<GqaWorkload>("workload");
    auto fail = [&](const std::string& key, const std::string& msg) {
        throw ConfigError(tree.blame("workload", key, msg) + ": " + msg);
    };
    if (cfg_.kv_placement != "local" && cfg_.kv_placement != "interleaved")
        fail("kv_placement", "workload.kv_placement must be local or interleaved, not '" + cfg_.kv_placement + "'");
    try {
        dtype_ = parse_dtype(cfg_.dtype);
        elt_ = dtype_bytes(dtype_);
    } catch (const UnitError& e) {
        fail("dtype", std::string("workload.dtype: ") + e.what());
    }
    where_block_ = tree.where("workload", "block_tokens");
    where_heads_ = tree.where("workload", "kv_heads");
    if (cfg_.block_tokens % cfg_.tile_tokens != 0)
        fail("block_tokens", "workload.block_tokens must be a multiple of workload.tile_tokens");
    shape_.query_heads = cfg_.query_heads;
    shape_.kv_heads = cfg_.kv_heads;
    shape_.head_dim = cfg_.head_dim;
    shape_.context = cfg_.context;
    shape_.element_bytes = elt_;
    shape_.tile_tokens = cfg_.tile_tokens;
    shape_.block_tokens = cfg_.block_tokens;
}

void GqaTestbench::build(Platform& p) {
    const PlatformConfig& c = p.config;
    uint32_t n = uint32_t(p.tiles.size());
    try {
        roof_ = analytic::gqa_roofline(shape_, n, c.dma, c.noc, c.hbm, c.pe, cfg_.kv_placement == "interleaved");
    } catch (const std::invalid_argument& e) {
        throw ConfigError(fmt::format("{}: workload.query_heads={}, workload.kv_heads={} on {} tiles: {} (the KV "
                                      "heads must divide over the tiles or the tiles over the KV heads)",
                                      where_heads_, cfg_.query_heads, cfg_.kv_heads, n, e.what()));
    }
    const analytic::GqaPlan& plan = roof_.plan;
    pe_ = c.pe;
    hbm_peak_ = c.hbm.stack_bandwidth().bytes_per_s * c.hbm.stacks;
    memory_ = MemorySystemNames::of(p);
    // One kernel program, one instance per tile: tile t's K/V in its region of its local stack (or
    // of the interleaved window), its Q, O and partial in a small region behind every tile's K/V.
    const uint64_t slice = plan.tokens_per_slice * cfg_.head_dim * elt_;
    const uint64_t region = (uint64_t(plan.heads_per_tile) * 2 * slice + (1 << 20) - 1) >> 20 << 20;
    const uint64_t misc = 1 << 20;
    if (uint64_t(n) * (region + misc) > c.hbm.stack_capacity)
        throw ConfigError(fmt::format("gqa: the KV cache ({} per tile) does not fit one stack", format_bytes(region)));
    GqaKernelSpec spec;
    spec.group = shape_.group();
    spec.head_dim = cfg_.head_dim;
    spec.tile_tokens = cfg_.tile_tokens;
    spec.block_tokens = cfg_.block_tokens;
    spec.buffers = cfg_.buffers;
    spec.heads = plan.heads_per_tile;
    spec.tokens = plan.tokens_per_slice;
    spec.tiles = n;
    spec.tiles_per_head = plan.tiles_per_head;
    spec.dtype = dtype_;
    spec.operand_buffers = c.pe.operand_buffers;
    spec.interleaved = cfg_.kv_placement == "interleaved";
    spec.kv_region = region;
    spec.misc_base = n * region;
    spec.misc_region = misc;
    std::string problem = gqa_kernel_check(spec, c.pe);
    if (!problem.empty())
        throw ConfigError(fmt::format("{}: gqa on {}: {}", where_block_, c.platform.name, problem));
    launch_ = KernelLaunch(std::make_shared<kernel::KernelProgram>(
                               kernel::KernelProgram::from_json(gqa_decode_kernel(spec, c.pe), "gqa")),
                           c, 0, 1);
    launch_.place(p);
    blocks_ = uint32_t(launch_.counts(0).tiles) - (plan.tiles_per_head > 1 ? 1 : 0);
    for (uint32_t t = 0; t < n; ++t) {
        Tile& tile = tiles_.emplace_back();
        tile.pe = p.tiles[t].pe.name();
        tile.program = launch_.pe_program(t);
        ProcessingElement& pe = p.tiles[t].pe;
        sc_core::sc_spawn([&tile, &pe] { tile.record = pe.execute(tile.program); }, fmt::format("gqa_tile{}", t).c_str());
    }
}

nlohmann::json GqaTestbench::results() const {
    // Times from the kernels' launch (after the per-kernel launch overhead), as a profile shows them.
    double origin = 1e300;
    for (auto& t : tiles_)
        origin = std::min(origin, t.record.launch_ns);
    double wall = 0, last_data = 0, first_data = 1e300, bytes = 0;
    for (auto& t : tiles_) {
        wall = std::max(wall, t.record.end_ns - origin);
        // The K/V loads of each block (its DMA-in stage): the first block in, the last byte in.
        for (uint32_t b = 0; b < blocks_ && b < t.record.tiles.size(); ++b) {
            const Interval& in = t.record.tiles[b][int(Stage::DmaIn)];
            if (b == 0)
                first_data = std::min(first_data, in.end - origin);
            last_data = std::max(last_data, in.end - origin);
        }
        bytes += stats().value(t.pe + ".dma_bytes");
    }
    if (first_data > 1e299)
        first_data = 0;
    // Per engine: the busiest tile's busy time and every tile's instruction count.
    struct Engine {
        const char* key;
        const char* counter;
        const char* count;
    };
    const Engine engines[] = {{"tensor", "tensor.busy_ns", "tensor.matmuls"},
                              {"vector", "vector.busy_ns", "vector.ops"},
                              {"scalar", "scalar.busy_ns", "scalar.ops"},
                              {"fetch", "tensor.fetch_busy_ns", "pe.instructions"}};
    nlohmann::json busy = nlohmann::json::object(), counts = nlohmann::json::object();
    std::vector<ResourceUse> use;
    for (auto& e : engines) {
        double most = 0, total = 0;
        for (size_t t = 0; t < tiles_.size(); ++t) {
            double b = stats().value(tiles_[t].pe + "." + e.counter);
            most = std::max(most, b);
            use.push_back({fmt::format("tile {} {} engine", t, e.key), wall > 0 ? b / wall : 0});
            if (std::string(e.key) != "fetch")
                total += stats().value(tiles_[t].pe + "." + e.count);
        }
        busy[e.key] = most;
        if (std::string(e.key) != "fetch")
            counts[e.key] = total;
    }
    // Utilization of every resource over the step; the busiest is the bound the simulation finds.
    memory_.add_use(use, false, wall);
    ResourceUse most = busiest(use);
    nlohmann::json ceilings = nlohmann::json::array();
    for (auto& c : roof_.ceilings)
        ceilings.push_back({{"resource", c.resource}, {"ns", c.ns}});
    double kv = shape_.kv_bytes();
    double stream_window = last_data - first_data;
    double drain = wall - last_data;  // compute, merge and O write after the last K/V byte
    double steady_gbps = last_data > 0 ? kv / last_data : 0;
    nlohmann::json reasons = nlohmann::json::array();
    reasons.push_back(fmt::format("start: first K/V block in at {:.0f} ns (sequencer fill, DMA start latency, one "
                                  "block's transfer: {:.1f} % of wall)",
                                  first_data, 100 * first_data / wall));
    reasons.push_back(fmt::format("drain: {:.0f} ns after the last K/V byte (last blocks' softmax/P.V, merge, O "
                                  "write: {:.1f} % of wall)",
                                  drain, 100 * drain / wall));
    reasons.push_back(fmt::format("streaming: K/V at {:.1f} GB/s from launch to the last byte = {:.1f} % of HBM peak",
                                  steady_gbps, 100 * steady_gbps / (hbm_peak_ / 1e9)));
    reasons.push_back(fmt::format("engines (busiest tile): tensor {:.1f} %, vector {:.1f} %, scalar {:.1f} %, "
                                  "fetch {:.1f} % of wall",
                                  100 * busy["tensor"].get<double>() / wall, 100 * busy["vector"].get<double>() / wall,
                                  100 * busy["scalar"].get<double>() / wall, 100 * busy["fetch"].get<double>() / wall));
    (void)stream_window;
    return {{"case", cfg_.name},
            {"model", cfg_.model},
            {"query_heads", cfg_.query_heads},
            {"kv_heads", cfg_.kv_heads},
            {"group", shape_.group()},
            {"context", cfg_.context},
            {"kv_placement", cfg_.kv_placement},
            {"tiles", tiles_.size()},
            {"heads_per_tile", roof_.plan.heads_per_tile},
            {"tiles_per_head", roof_.plan.tiles_per_head},
            {"sim_time_ns", wall},
            {"bytes", bytes},
            {"kv_bytes", kv},
            {"gb_per_s", bytes / wall},
            {"hbm_peak_gb_per_s", hbm_peak_ / 1e9},
            {"hbm_roofline_ns", roof_.hbm_peak_ns},
            {"fraction_of_hbm_roofline", roof_.hbm_peak_ns / wall},
            {"roofline_ns", roof_.bound.ns},
            {"roofline_bound", roof_.bound.resource},
            {"roofline_ceilings", ceilings},
            {"sim_over_roofline", wall / roof_.bound.ns},
            {"busiest_resource", most.resource},
            {"busiest_utilization", most.utilization},
            {"bound", resource_kind(most.resource)},
            {"first_data_ns", first_data},
            {"drain_ns", drain},
            {"stream_gb_per_s", steady_gbps},
            {"engine_busy_ns", busy},
            {"engine_instructions", counts},
            {"tensor_busy_ns", busy["tensor"]},
            {"vector_busy_ns", busy["vector"]},
            {"scalar_busy_ns", busy["scalar"]},
            {"why_not_roofline", reasons}};
}

std::string GqaTestbench::summary() const {
    auto r = results();
    std::string s = fmt::format(
        "gqa {} ({}, {}/{} heads, context {}, {}): wall {:.1f} ns, {:.0f} B, {:.1f} GB/s = {:.1f} % of the HBM "
        "roofline ({:.1f} ns); roofline estimate {:.1f} ns ({}), sim/roofline {:.3f}; bound: {} ({}, {:.1f} %)",
        cfg_.name, cfg_.model, cfg_.query_heads, cfg_.kv_heads, cfg_.context, cfg_.kv_placement,
        r["sim_time_ns"].get<double>(), r["bytes"].get<double>(), r["gb_per_s"].get<double>(),
        100 * r["fraction_of_hbm_roofline"].get<double>(), r["hbm_roofline_ns"].get<double>(),
        r["roofline_ns"].get<double>(), r["roofline_bound"].get<std::string>(), r["sim_over_roofline"].get<double>(),
        r["bound"].get<std::string>(), r["busiest_resource"].get<std::string>(),
        100 * r["busiest_utilization"].get<double>());
    for (auto& why : r["why_not_roofline"])
        s += "\n  " + why.get<std::string>();
    return s;
}

} // namespace nctlm
