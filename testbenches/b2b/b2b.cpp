#include "testbenches/b2b/b2b.h"

#include "testbenches/limits.h"

#include <algorithm>
#include <fmt/format.h>

namespace nctlm {

const FieldList<B2bConfig>& B2bConfig::fields() {
    using C = B2bConfig;
    static const FieldList<C> f = {
        count("n", &C::n, "8", 1, 100000, "requests issued back to back"),
        nctlm::bytes("bytes", &C::bytes, "32 KiB", 1, 1ull << 32, "size of each request"),
        count("tile", &C::tile, "0", 0, 255, "initiating tile"),
        count("queue", &C::queue, "0", 0, 63, "the one DMA queue all requests use"),
    };
    return f;
}

void B2bTestbench::configure(const ConfigTree& tree) {
    cfg_ = tree.load<B2bConfig>("testbench");
    PlatformConfig pc = PlatformConfig::load(tree);
    if (pc.sim.timing != TimingMode::At)  // its figure is the AT phenomenon LT and flow leave out
        throw ConfigError(tree.where("sim", "timing") +
                          ": testbench 'b2b' measures how END_REQ lets a DMA channel pipeline back-to-back "
                          "requests, which the " +
                          std::string(pc.sim.timing == TimingMode::Lt ? "loosely-timed" : "flow") +
                          " mode does not model; run it with --timing at (sim.timing: at)");
    check_tile(tree, pc, cfg_.tile);
    // The n requests read consecutive blocks of the tile's local stack.
    check_in_stack(tree, pc, "n", uint64_t(cfg_.n) * cfg_.bytes,
                   fmt::format("testbench.n x testbench.bytes ({} x {})", cfg_.n, cfg_.bytes));
}

void B2bTestbench::build(Platform& p) {
    if (cfg_.tile >= p.tiles.size())
        throw ConfigError(fmt::format("testbench.tile={} but the platform has {} tiles", cfg_.tile, p.tiles.size()));
    if (cfg_.queue >= p.config.dma.queues)
        throw ConfigError(fmt::format("testbench.queue={} but dma.queues={}", cfg_.queue, p.config.dma.queues));
    release_ = p.config.dma.channel_release == ChannelRelease::OnAccept ? "on_accept" : "on_response";
    sc_core::sc_spawn([this, &p] { traffic(p); }, "b2b_traffic");
}

void B2bTestbench::traffic(Platform& p) {
    ProcessingElement& pe = p.tiles[cfg_.tile].pe;
    uint64_t base = p.stack_address(p.local_stack(cfg_.tile), 0);
    sc_core::sc_event done;
    uint32_t left = 1;
    auto count_down = [&](DmaDescriptor&) {
        if (--left == 0)
            done.notify(sc_core::SC_ZERO_TIME);
    };
    single_ = DmaDescriptor{};
    single_.address = base;
    single_.bytes = cfg_.bytes;
    single_.queue = cfg_.queue;
    single_.on_complete = count_down;
    pe.post_dma(single_);
    sc_core::wait(done);
    // The pipeline is idle again: post all N at the same instant.
    left = cfg_.n;
    for (uint32_t i = 0; i < cfg_.n; ++i) {
        DmaDescriptor& d = batch_.emplace_back();
        d.address = base + uint64_t(i) * cfg_.bytes;
        d.bytes = cfg_.bytes;
        d.queue = cfg_.queue;
        d.on_complete = count_down;
        pe.post_dma(d);
    }
    sc_core::wait(done);
}

uint64_t B2bTestbench::memory_estimate() const {
    // One descriptor per request, plus the queue-latency and per-PC wait samples (8 B each) of
    // its bursts.
    uint64_t bursts_per = 1 + cfg_.bytes / 1024;
    return uint64_t(cfg_.n) * (sizeof(DmaDescriptor) + bursts_per * 16);
}

nlohmann::json B2bTestbench::results() const {
    double single = single_.t_done - single_.t_post;
    double first_post = 1e300, last_done = 0, first_issue = 1e300, last_issue = 0;
    for (auto& d : batch_) {
        first_post = std::min(first_post, d.t_post);
        last_done = std::max(last_done, d.t_done);
        first_issue = std::min(first_issue, d.t_first_issue);
        last_issue = std::max(last_issue, d.t_first_issue);
    }
    double wall = last_done - first_post, serial = cfg_.n * single;
    return {{"n", cfg_.n},
            {"bytes", cfg_.bytes},
            {"channel_release", release_},
            {"single_op_ns", single},
            {"sim_time_ns", wall},
            {"serial_ns", serial},
            {"ratio", wall / serial},
            {"t_start_spread_ns", last_issue - first_issue}};
}

std::string B2bTestbench::summary() const {
    auto r = results();
    return fmt::format("b2b: {} x {} B reads, channel_release={}: single op {:.2f} ns, wall {:.2f} ns, "
                       "serial {:.2f} ns, ratio {:.3f}, t_start spread {:.2f} ns",
                       cfg_.n, cfg_.bytes, release_, r["single_op_ns"].get<double>(), r["sim_time_ns"].get<double>(),
                       r["serial_ns"].get<double>(), r["ratio"].get<double>(), r["t_start_spread_ns"].get<double>());
}

} // namespace nctlm
