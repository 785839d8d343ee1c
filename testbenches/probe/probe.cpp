#include "testbenches/probe/probe.h"

#include "testbenches/limits.h"

#include <fmt/format.h>

namespace nctlm {

const FieldList<ProbeConfig>& ProbeConfig::fields() {
    using C = ProbeConfig;
    static const FieldList<C> f = {
        nctlm::bytes("bytes", &C::bytes, "32 KiB", 1, 1ull << 32, "transfer size"),
        text("target", &C::target, "local", "local: the tile's own stack; remote: the next stack on the ring"),
        count("tile", &C::tile, "0", 0, 255, "initiating tile"),
        nctlm::bytes("offset", &C::offset, "0 B", 0, 1ull << 40, "offset inside the target stack"),
        flag("write", &C::write, "false", "write instead of read"),
    };
    return f;
}

void ProbeTestbench::configure(const ConfigTree& tree) {
    cfg_ = tree.load<ProbeConfig>("testbench");
    PlatformConfig pc = PlatformConfig::load(tree);
    check_tile(tree, pc, cfg_.tile);
    check_in_stack(tree, pc, "offset", cfg_.offset + cfg_.bytes,
                   fmt::format("testbench.offset + testbench.bytes ({} + {})", cfg_.offset, cfg_.bytes));
    if (cfg_.target != "local" && cfg_.target != "remote")
        throw ConfigError(tree.where("testbench", "target") + ": testbench.target must be local or remote, not '" +
                          cfg_.target + "'");
    if (cfg_.write && pc.sim.timing == TimingMode::Flow)  // docs/performance.md, "What flow refuses"
        throw ConfigError(tree.where("testbench", "write") +
                          ": a write probe does not run under sim.timing: flow: AT acknowledges a posted write from "
                          "the controller's buffer, the flow pays the pseudo-channel's rate (12-33 % off AT on the "
                          "shipped platforms, up to 200 % on random ones); run it with --timing at or lt");
}

void ProbeTestbench::build(Platform& p) {
    if (cfg_.tile >= p.tiles.size())
        throw ConfigError(fmt::format("testbench.tile={} but the platform has {} tiles", cfg_.tile, p.tiles.size()));
    stack_ = cfg_.target == "local" ? p.local_stack(cfg_.tile) : p.remote_stack(cfg_.tile);
    desc_.address = p.stack_address(stack_, cfg_.offset);
    desc_.bytes = cfg_.bytes;
    desc_.write = cfg_.write;
    ProcessingElement& pe = p.tiles[cfg_.tile].pe;
    sc_core::sc_spawn([this, &pe] { pe.post_dma(desc_); }, "probe_traffic");
}

nlohmann::json ProbeTestbench::results() const {
    return {{"latency_ns", desc_.t_done - desc_.t_post},
            {"bytes", cfg_.bytes},
            {"target", cfg_.target},
            {"stack", stack_},
            {"tile", cfg_.tile}};
}

std::string ProbeTestbench::summary() const {
    return fmt::format("probe: {} {} B tile{} -> stack{} ({}): latency {:.2f} ns", cfg_.write ? "write" : "read",
                       cfg_.bytes, cfg_.tile, stack_, cfg_.target, desc_.t_done - desc_.t_post);
}

} // namespace nctlm
