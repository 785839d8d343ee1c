#include "testbenches/gqa/gqa.h"

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
        throw ConfigError(tree.where("workload", key) + ": " + msg);
    };
    if (cfg_.kv_placement != "local" && cfg_.kv_placement != "interleaved")
        fail("kv_placement", "workload.kv_placement must be local or interleaved, not '" + cfg_.kv_placement + "'");
    try {
        elt_ = dtype_bytes(parse_dtype(cfg_.dtype));
    } catch (const UnitError& e) {
        fail("dtype", std::string("workload.dtype: ") + e.what());
    }
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

uint64_t GqaTestbench::kv_address(uint32_t t, uint32_t head, bool v, uint64_t token) const {
    return tiles_[t].base + (uint64_t(head) * 2 + (v ? 1 : 0)) * slice_bytes_ + token * cfg_.head_dim * elt_;
}

void GqaTestbench::build(Platform& p) {
    const PlatformConfig& c = p.config;
    uint32_t n = uint32_t(p.tiles.size());
    try {
        roof_ = analytic::gqa_roofline(shape_, n, c.dma, c.noc, c.hbm, c.pe, cfg_.kv_placement == "interleaved");
    } catch (const std::invalid_argument& e) {
        throw ConfigError(std::string("gqa: ") + e.what());
    }
    const analytic::GqaPlan& plan = roof_.plan;
    pe_ = c.pe;
    dma_ = c.dma;
    start_latency_ = c.dma.start_latency.ns;
    hbm_peak_ = c.hbm.stack_bandwidth().bytes_per_s * c.hbm.stacks;
    slice_bytes_ = plan.tokens_per_slice * cfg_.head_dim * elt_;
    uint64_t region = (uint64_t(plan.heads_per_tile) * 2 * slice_bytes_ + (1 << 20) - 1) >> 20 << 20;
    uint64_t misc = 1 << 20;  // Q, O, partials per tile
    if (uint64_t(n) * (region + misc) > c.hbm.stack_capacity)
        throw ConfigError(fmt::format("gqa: the KV cache ({} per tile) does not fit one stack", format_bytes(region)));
    for (auto& h : p.hbm)
        stack_names_.push_back(h->name());
    for (uint32_t t = 0; t < n; ++t)
        tile_names_.push_back(p.tiles[t].dma.name());
    noc_name_ = p.noc.name();
    for (size_t l = 0; l < p.noc.topology().links(); ++l)
        link_names_.push_back(p.noc.topology().link_name(l));

    uint32_t per_block = 2 * (cfg_.block_tokens / cfg_.tile_tokens);
    for (uint32_t t = 0; t < n; ++t)
        tiles_.emplace_back();
    for (uint32_t t = 0; t < n; ++t) {
        Tile& tile = tiles_[t];
        uint32_t ls = p.local_stack(t);
        tile.base = cfg_.kv_placement == "interleaved" ? p.address_map.interleaved_base() + t * region
                                                       : p.stack_address(ls, t * region);
        tile.misc_base = p.stack_address(ls, n * region + t * misc);
        uint32_t split = t % plan.tiles_per_head;
        for (uint32_t h = 0; h < plan.heads_per_tile; ++h)
            for (uint64_t tok = 0; tok < plan.tokens_per_slice; tok += cfg_.block_tokens)
                tile.work.push_back({h, tok, std::min<uint64_t>(cfg_.block_tokens, plan.tokens_per_slice - tok)});
        (void)split;
        for (uint32_t b = 0; b < cfg_.buffers; ++b) {
            Block& blk = tile.slots.emplace_back();
            blk.desc.resize(per_block);
            for (auto& d : blk.desc)
                d.on_complete = [this, t, &blk](DmaDescriptor& done) {
                    Tile& tl = tiles_[t];
                    blk.ready = std::max(blk.ready, done.t_done);
                    if (tl.first_data < 0)
                        tl.first_data = done.t_done;
                    tl.last_data = std::max(tl.last_data, done.t_done);
                    if (--blk.left == 0) {
                        blk.done.notify(sc_core::SC_ZERO_TIME);
                        --tl.blocks_in_flight;
                    }
                };
        }
        auto misc_cb = [this, t](DmaDescriptor&) { tiles_[t].misc_done.notify(sc_core::SC_ZERO_TIME); };
        uint32_t g = shape_.group();
        tile.q.address = tile.misc_base;
        tile.q.bytes = uint64_t(plan.heads_per_tile) * g * cfg_.head_dim * elt_;
        tile.q.on_complete = misc_cb;
        for (uint32_t h = 0; h < plan.heads_per_tile; ++h) {
            DmaDescriptor& o = tile.o.emplace_back();
            o.address = tile.misc_base + 64 * 1024 + h * 4096;
            o.bytes = uint64_t(g) * cfg_.head_dim * elt_;
            o.write = true;
            o.on_complete = misc_cb;
        }
        // Split-KV over tiles: a slice's partial O (fp32) plus its running max and sum per row.
        uint64_t partial_bytes = uint64_t(g) * (cfg_.head_dim + 2) * 4;
        tile.partial.address = tile.misc_base + 128 * 1024;
        tile.partial.bytes = partial_bytes;
        tile.partial.write = true;
        uint32_t owner = t - split;
        tile.partial.on_complete = [this, owner](DmaDescriptor&) {
            tiles_[owner].partial_done.notify(sc_core::SC_ZERO_TIME);
            --tiles_[owner].partials_left;
        };
        if (split == 0) {
            tile.partials_left = plan.tiles_per_head - 1;
            for (uint32_t k = 1; k < plan.tiles_per_head; ++k) {
                DmaDescriptor& d = tile.partial_in.emplace_back();
                d.address = p.stack_address(p.local_stack(t + k), n * region + (t + k) * misc + 128 * 1024);
                d.bytes = partial_bytes;
                d.on_complete = misc_cb;
            }
        }
    }
    for (uint32_t t = 0; t < n; ++t)
        sc_core::sc_spawn([this, &p, t] { tile_thread(p, t); }, fmt::format("gqa_tile{}", t).c_str());
}

void GqaTestbench::post_one(Platform& p, uint32_t t, DmaDescriptor& d) {
    Tile& tile = tiles_[t];
    d.queue = uint32_t(tile.queue_rr++ % dma_.queues);
    bytes_ += double(d.bytes);
    p.tiles[t].pe.post_dma(d);
}

void GqaTestbench::wait_done(Tile& tile, const DmaDescriptor& d) {
    while (d.t_done < 0)
        sc_core::wait(tile.misc_done);
}

// One DMA instruction for K and one for V, each cut into one descriptor per K/V tile.
void GqaTestbench::post_block(Platform& p, uint32_t t, Block& b, const Work& w) {
    uint64_t tiles = (w.tokens + cfg_.tile_tokens - 1) / cfg_.tile_tokens;
    uint64_t tile_bytes = uint64_t(cfg_.tile_tokens) * cfg_.head_dim * elt_;
    Tile& T = tiles_[t];
    if (T.blocks_in_flight == 0 && T.last_data > 0)  // the DMA ran dry: compute held the buffers
        T.dma_idle_ns += now_ns() - T.last_data;
    ++T.blocks_in_flight;
    b.used = uint32_t(2 * tiles);
    b.left = b.used;
    b.ready = 0;
    for (int v = 0; v < 2; ++v)
        for (uint64_t i = 0; i < tiles; ++i) {
            DmaDescriptor& d = b.desc[v * tiles + i];
            uint64_t tok = w.token0 + i * cfg_.tile_tokens;
            d.address = kv_address(t, w.head, v == 1, tok);
            d.bytes = std::min(tile_bytes, (w.token0 + w.tokens - tok) * cfg_.head_dim * elt_);
            post_one(p, t, d);
        }
}

void GqaTestbench::tile_thread(Platform& p, uint32_t t) {
    Tile& T = tiles_[t];
    const analytic::GqaPlan& plan = roof_.plan;
    uint32_t g = shape_.group(), split = t % plan.tiles_per_head;
    size_t n = T.work.size(), nb = T.slots.size();
    auto cost_of = [&](uint64_t tokens) -> const analytic::GqaBlockCost& {
        auto it = costs_.find(tokens);
        if (it == costs_.end())
            it = costs_.emplace(tokens, analytic::gqa_block_cost(pe_, g, cfg_.head_dim, tokens, cfg_.tile_tokens)).first;
        return it->second;
    };
    auto run = [](double& engine_free, double& busy, double ready, double span) {
        double start = std::max(ready, engine_free);
        engine_free = start + span;
        busy += span;
        return engine_free;
    };
    // The kernel starts at 0: the PE issues the Q load and the first blocks' DMA instructions.
    sc_core::wait(to_sc(Duration(start_latency_)));
    post_one(p, t, T.q);
    for (size_t i = 0; i < std::min(n, nb); ++i)
        post_block(p, t, T.slots[i], T.work[i]);
    wait_done(T, T.q);
    double q_ready = T.q.t_done;

    // Block i-1's P.V and O update run after block i's Q.K^T (one block of software pipelining).
    struct Pending {
        size_t i;
        double softmax_end;
    };
    std::optional<Pending> prev;
    double last_acc = 0, out_done = 0;
    uint32_t chunks = 1;
    auto finish = [&](const Pending& pd) {
        const analytic::GqaBlockCost& c = cost_of(T.work[pd.i].tokens);
        double pv_end = run(T.tensor_free, T.tensor_busy, pd.softmax_end, c.pv_ns);
        last_acc = run(T.vector_free, T.vector_busy, pv_end, c.accumulate_ns);
        size_t next = pd.i + nb;  // the buffer is free once P.V has read V
        if (next < n) {
            double issue = pv_end + start_latency_;
            if (issue > now_ns())
                sc_core::wait(until(issue));
            post_block(p, t, T.slots[pd.i % nb], T.work[next]);
        }
    };
    for (size_t i = 0; i < n; ++i) {
        Block& b = T.slots[i % nb];
        while (b.left > 0)
            sc_core::wait(b.done);
        const analytic::GqaBlockCost& c = cost_of(T.work[i].tokens);
        chunks = std::max(chunks, c.chunks);
        double qk_end = run(T.tensor_free, T.tensor_busy, std::max(b.ready, q_ready), c.qk_ns);
        double sm_end = run(T.vector_free, T.vector_busy, qk_end, c.softmax_ns);
        if (prev)
            finish(*prev);
        prev = Pending{i, sm_end};
        bool head_end = i + 1 == n || T.work[i + 1].head != T.work[i].head;
        if (!head_end)
            continue;
        finish(*prev);
        prev.reset();
        // Merge the packed chunks (and, on a split head's owner, the other tiles' partials).
        uint32_t partials = split == 0 ? plan.tiles_per_head : 1;
        double ready = last_acc;
        if (partials > 1) {  // the owner reads the others' partials once they have landed
            while (T.partials_left > 0)
                sc_core::wait(T.partial_done);
            sc_core::wait(to_sc(Duration(start_latency_)));
            for (auto& d : T.partial_in)
                post_one(p, t, d);
            for (auto& d : T.partial_in) {
                wait_done(T, d);
                ready = std::max(ready, d.t_done);
            }
        }
        analytic::GqaBlockCost comb = analytic::gqa_combine_cost(pe_, g, cfg_.head_dim, chunks, partials);
        double comb_t = run(T.tensor_free, T.tensor_busy, ready, comb.tensor_ns);
        double comb_v = run(T.vector_free, T.vector_busy, comb_t, comb.vector_ns);
        double issue = comb_v + start_latency_;
        if (issue > now_ns())
            sc_core::wait(until(issue));
        DmaDescriptor& out = split == 0 ? T.o[T.work[i].head] : T.partial;
        post_one(p, t, out);
        wait_done(T, out);  // small: one write, ~1/100 of a block
        out_done = std::max(out_done, out.t_done);
    }
    T.done_ns = std::max(out_done, std::max(T.tensor_free, T.vector_free));
}

nlohmann::json GqaTestbench::results() const {
    double wall = 0, last_data = 0, first_data = 1e300, tensor = 0, vector = 0, buffer_wait = 0;
    for (auto& t : tiles_) {
        wall = std::max(wall, t.done_ns);
        last_data = std::max(last_data, t.last_data);
        first_data = std::min(first_data, t.first_data);
        tensor = std::max(tensor, t.tensor_busy);
        vector = std::max(vector, t.vector_busy);
        buffer_wait += t.dma_idle_ns / double(tiles_.size());
    }
    // Utilization of every resource over the step; the busiest is the one nearest its roofline.
    std::vector<std::pair<std::string, double>> use;
    for (size_t s = 0; s < stack_names_.size(); ++s)
        use.push_back({fmt::format("hbm stack {}", s), stats().value(stack_names_[s] + ".utilization")});
    for (size_t t = 0; t < tile_names_.size(); ++t)
        use.push_back({fmt::format("tile {} dma engines", t), stats().value(tile_names_[t] + ".utilization")});
    for (auto& l : link_names_)
        use.push_back({"noc " + l, stats().value(noc_name_ + "." + l + ".utilization")});
    for (size_t t = 0; t < tiles_.size(); ++t) {
        use.push_back({fmt::format("tile {} tensor engine", t), wall > 0 ? tiles_[t].tensor_busy / wall : 0});
        use.push_back({fmt::format("tile {} vector engine", t), wall > 0 ? tiles_[t].vector_busy / wall : 0});
    }
    auto busiest = *std::max_element(use.begin(), use.end(), [](auto& a, auto& b) { return a.second < b.second; });
    nlohmann::json ceilings = nlohmann::json::array();
    for (auto& c : roof_.ceilings)
        ceilings.push_back({{"resource", c.resource}, {"ns", c.ns}});
    double kv = shape_.kv_bytes();
    double stream_window = last_data - start_latency_;
    double fill = first_data;                 // DMA start latency + the first descriptor's round trip
    double drain = wall - last_data;          // compute, merge and O write after the last K/V byte
    double steady_gbps = stream_window > 0 ? kv / stream_window : 0;
    nlohmann::json reasons = nlohmann::json::array();
    reasons.push_back(fmt::format("start: DMA start latency {:.0f} ns + first descriptor -> first data at {:.0f} ns "
                                  "({:.1f} % of wall)",
                                  start_latency_, fill, 100 * fill / wall));
    reasons.push_back(fmt::format("drain: {:.0f} ns after the last K/V byte (last blocks' softmax/P.V, merge, O "
                                  "write: {:.1f} % of wall)",
                                  drain, 100 * drain / wall));
    reasons.push_back(fmt::format("streaming: K/V at {:.1f} GB/s between the first DMA and the last byte = {:.1f} % "
                                  "of HBM peak (PC conflicts, NoC links, DMA engine rate)",
                                  steady_gbps, 100 * steady_gbps / (hbm_peak_ / 1e9)));
    reasons.push_back(fmt::format("compute: a tile's DMA sat idle waiting for a free buffer {:.0f} ns on average (softmax "
                                  "dependency chain / engine time); tensor busy {:.1f} %, vector busy {:.1f} % of wall",
                                  buffer_wait, 100 * tensor / wall, 100 * vector / wall));
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
            {"wall_ns", wall},
            {"bytes", bytes_},
            {"kv_bytes", kv},
            {"gb_per_s", bytes_ / wall},
            {"hbm_peak_gb_per_s", hbm_peak_ / 1e9},
            {"hbm_roofline_ns", roof_.hbm_peak_ns},
            {"fraction_of_hbm_roofline", roof_.hbm_peak_ns / wall},
            {"roofline_ns", roof_.bound.ns},
            {"roofline_bound", roof_.bound.resource},
            {"roofline_ceilings", ceilings},
            {"sim_over_roofline", wall / roof_.bound.ns},
            {"busiest_resource", busiest.first},
            {"busiest_utilization", busiest.second},
            {"first_data_ns", fill},
            {"drain_ns", drain},
            {"stream_gb_per_s", steady_gbps},
            {"tensor_busy_ns", tensor},
            {"vector_busy_ns", vector},
            {"dma_idle_for_buffer_ns", buffer_wait},
            {"why_not_roofline", reasons}};
}

std::string GqaTestbench::summary() const {
    auto r = results();
    std::string s = fmt::format(
        "gqa {} ({}, {}/{} heads, context {}, {}): wall {:.1f} ns, {:.0f} B, {:.1f} GB/s = {:.1f} % of the HBM "
        "roofline ({:.1f} ns); roofline estimate {:.1f} ns ({}), sim/roofline {:.3f}; busiest: {} ({:.1f} %)",
        cfg_.name, cfg_.model, cfg_.query_heads, cfg_.kv_heads, cfg_.context, cfg_.kv_placement,
        r["wall_ns"].get<double>(), r["bytes"].get<double>(), r["gb_per_s"].get<double>(),
        100 * r["fraction_of_hbm_roofline"].get<double>(), r["hbm_roofline_ns"].get<double>(),
        r["roofline_ns"].get<double>(), r["roofline_bound"].get<std::string>(), r["sim_over_roofline"].get<double>(),
        r["busiest_resource"].get<std::string>(), 100 * r["busiest_utilization"].get<double>());
    for (auto& why : r["why_not_roofline"])
        s += "\n  " + why.get<std::string>();
    return s;
}

} // namespace nctlm
