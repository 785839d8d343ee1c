#include "testbenches/stream/stream.h"

#include <algorithm>
#include <fmt/format.h>

namespace nctlm {

const FieldList<StreamConfig>& StreamConfig::fields() {
    using C = StreamConfig;
    static const FieldList<C> f = {
        text("placement", &C::placement, "local",
             "local: the tile's own stack; remote: the next stack on the ring; interleaved: all stacks"),
        nctlm::bytes("bytes_per_tile", &C::bytes_per_tile, "8 MiB", 1, 1ull << 36, "bytes each tile reads"),
        nctlm::bytes("descriptor_bytes", &C::descriptor_bytes, "32 KiB", 64, 1ull << 30,
                     "size of one DMA descriptor (the Neuron DMA guide: >= 32 KiB reaches full bandwidth)"),
        count("in_flight", &C::in_flight, "32", 1, 4096, "descriptors kept posted per tile"),
        count("queues", &C::queues, "0", 0, 64, "DMA queues used per tile, round robin (0: all)"),
    };
    return f;
}

void StreamTestbench::configure(const ConfigTree& tree) {
    cfg_ = tree.load<StreamConfig>("testbench");
    if (cfg_.placement != "local" && cfg_.placement != "remote" && cfg_.placement != "interleaved")
        throw ConfigError(tree.where("testbench", "placement") +
                          ": testbench.placement must be local, remote or interleaved, not '" + cfg_.placement + "'");
}

void StreamTestbench::build(Platform& p) {
    const PlatformConfig& c = p.config;
    uint32_t queues = cfg_.queues ? cfg_.queues : c.dma.queues;
    if (queues > c.dma.queues)
        throw ConfigError(fmt::format("testbench.queues={} but dma.queues={}", queues, c.dma.queues));
    uint32_t n = uint32_t(p.tiles.size());
    // Tiles that share a target stack read disjoint ranges of it.
    uint64_t span = (cfg_.bytes_per_tile + c.hbm.interleave - 1) / c.hbm.interleave * c.hbm.interleave;
    if (span * n > c.hbm.stack_capacity)
        throw ConfigError(fmt::format("testbench.bytes_per_tile x {} tiles exceeds one stack ({})", n,
                                      format_bytes(c.hbm.stack_capacity)));
    hbm_peak_ = c.hbm.stack_bandwidth().bytes_per_s * c.hbm.stacks;
    stack_peak_ = c.hbm.stack_bandwidth().bytes_per_s;
    dma_peak_ = c.dma.data_bandwidth().bytes_per_s;
    for (auto& h : p.hbm)
        stack_names_.push_back(h->name());
    tiles_.resize(n);
    for (uint32_t t = 0; t < n; ++t) {
        Tile& tile = tiles_[t];
        if (cfg_.placement == "interleaved") {
            tile.base = p.address_map.interleaved_base() + t * span;
            tile_stack_.push_back(uint32_t(-1));
        } else {
            uint32_t s = cfg_.placement == "local" ? p.local_stack(t) : p.remote_stack(t);
            tile.base = p.stack_address(s, t * span);
            tile_stack_.push_back(s);
        }
        for (uint32_t i = 0; i < cfg_.in_flight; ++i) {
            DmaDescriptor& d = tile.slots.emplace_back();
            d.queue = i % queues;
            d.on_complete = [this, &p, t](DmaDescriptor& done) {
                Tile& tl = tiles_[t];
                tl.done_bytes += done.bytes;
                tl.last_done = std::max(tl.last_done, done.t_done);
                post_next(p, t, done);
            };
        }
    }
    sc_core::sc_spawn(
        [this, &p] {
            for (uint32_t t = 0; t < tiles_.size(); ++t)
                for (auto& d : tiles_[t].slots)
                    post_next(p, t, d);
        },
        "stream_traffic");
}

// Reuses a finished slot for the tile's next chunk, if any is left.
void StreamTestbench::post_next(Platform& p, uint32_t t, DmaDescriptor& d) {
    Tile& tile = tiles_[t];
    if (tile.posted >= cfg_.bytes_per_tile)
        return;
    d.address = tile.base + tile.posted;
    d.bytes = std::min(cfg_.descriptor_bytes, cfg_.bytes_per_tile - tile.posted);
    d.trace_flow = 0;  // a fresh trace flow per post, not the slot's previous one
    tile.posted += d.bytes;
    if (tile.first_post < 0)
        tile.first_post = now_ns();
    p.tiles[t].pe.post_dma(d);
}

nlohmann::json StreamTestbench::results() const {
    double start = 1e300, end = 0, bytes = 0;
    nlohmann::json per_tile = nlohmann::json::array(), per_stack = nlohmann::json::array();
    for (size_t t = 0; t < tiles_.size(); ++t) {
        const Tile& tl = tiles_[t];
        double wall = tl.last_done - tl.first_post;
        start = std::min(start, tl.first_post);
        end = std::max(end, tl.last_done);
        bytes += double(tl.done_bytes);
        per_tile.push_back({{"tile", t},
                            {"stack", tile_stack_[t] == uint32_t(-1) ? nlohmann::json("all")
                                                                     : nlohmann::json(tile_stack_[t])},
                            {"bytes", tl.done_bytes},
                            {"sim_time_ns", wall},
                            {"gb_per_s", wall > 0 ? double(tl.done_bytes) / wall : 0},
                            {"fraction_of_dma_peak", wall > 0 ? double(tl.done_bytes) / wall / (dma_peak_ / 1e9) : 0}});
    }
    double wall = end - start;
    for (size_t s = 0; s < stack_names_.size(); ++s) {
        double b = stats().value(stack_names_[s] + ".bytes_read");
        per_stack.push_back({{"stack", s},
                             {"bytes", b},
                             {"gb_per_s", wall > 0 ? b / wall : 0},
                             {"fraction_of_peak", wall > 0 ? b / wall / (stack_peak_ / 1e9) : 0}});
    }
    double gbps = wall > 0 ? bytes / wall : 0;
    return {{"placement", cfg_.placement},
            {"tiles", tiles_.size()},
            {"bytes", bytes},
            {"sim_time_ns", wall},
            {"gb_per_s", gbps},
            {"hbm_peak_gb_per_s", hbm_peak_ / 1e9},
            {"fraction_of_hbm_peak", gbps / (hbm_peak_ / 1e9)},
            {"stack_peak_gb_per_s", stack_peak_ / 1e9},
            {"dma_peak_gb_per_s_per_tile", dma_peak_ / 1e9},
            {"per_tile", per_tile},
            {"per_stack", per_stack}};
}

std::string StreamTestbench::summary() const {
    auto r = results();
    std::string s = fmt::format("stream: {} tiles, placement={}, {} B each: {:.1f} GB/s = {:.1f} % of HBM peak "
                                "{:.1f} GB/s (wall {:.1f} ns)",
                                tiles_.size(), cfg_.placement, cfg_.bytes_per_tile, r["gb_per_s"].get<double>(),
                                100 * r["fraction_of_hbm_peak"].get<double>(), hbm_peak_ / 1e9,
                                r["sim_time_ns"].get<double>());
    for (auto& t : r["per_tile"])
        s += fmt::format("\n  tile{} -> stack {}: {:.1f} GB/s ({:.1f} % of its DMA peak {:.1f} GB/s)",
                         t["tile"].get<int>(), t["stack"].dump(), t["gb_per_s"].get<double>(),
                         100 * t["fraction_of_dma_peak"].get<double>(), dma_peak_ / 1e9);
    for (auto& st : r["per_stack"])
        s += fmt::format("\n  stack{}: {:.1f} GB/s ({:.1f} % of {:.1f} GB/s)", st["stack"].get<int>(),
                         st["gb_per_s"].get<double>(), 100 * st["fraction_of_peak"].get<double>(), stack_peak_ / 1e9);
    return s;
}

} // namespace nctlm
