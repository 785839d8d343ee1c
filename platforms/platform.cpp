#include "platforms/platform.h"

#include "models/checker/bind.h"
#include "platforms/flow_tables.h"

#include <fmt/format.h>

namespace nctlm {

Platform::Platform(sc_core::sc_module_name name, const PlatformConfig& cfg)
    : sc_module(name), config(cfg), address_map(cfg.hbm), tiles(cfg.platform.tiles, cfg.dma, cfg.pe),
      noc("noc", cfg.noc, address_map, cfg.platform.tiles) {
    for (uint32_t s = 0; s < cfg.hbm.stacks; ++s) {
        hbm.push_back(std::make_unique<HbmController>(fmt::format("hbm{}", s).c_str(), cfg.hbm, address_map, s));
        nctlm::bind(noc.stack_sockets, hbm.back()->socket, fmt::format("noc_hbm{}", s));
    }
    for (size_t t = 0; t < tiles.size(); ++t)
        nctlm::bind(tiles[t].dma.socket, noc.tile_sockets, fmt::format("tile{}_noc", t));
    if (cfg.sim.timing == TimingMode::Lt)
        enable_loosely_timed();
    if (cfg.sim.timing == TimingMode::Flow)
        enable_flow();
}

void Platform::enable_flow() {
    FlowTableFound found = flow_table_for(config.hbm);
    flow_table_origin_ = found.origin;
    std::vector<HbmController*> controllers;
    for (auto& h : hbm)
        controllers.push_back(h.get());
    flow_ = std::make_unique<FlowNetwork>("flow", config.dma, config.noc, config.hbm, address_map, noc.topology(),
                                          controllers, noc.name(), std::move(found.table),
                                          config.sim.flow_sharing == FlowSharing::Fair ? flow::Sharing::Fair
                                                                                       : flow::Sharing::InOrder);
    for (size_t t = 0; t < tiles.size(); ++t)
        tiles[t].dma.set_flow(*flow_);
}

void Platform::enable_loosely_timed() {
    // The quantum is the scheduler's lookahead past the kernel's next activity; also published as
    // the TLM global quantum for initiators of a user's own that keep a tlm_quantumkeeper.
    tlm::tlm_global_quantum::instance().set(to_sc(config.sim.quantum));
    lt_scheduler_ = std::make_unique<DmaLtScheduler>("dma_lt", config.sim.quantum.ns);
    for (auto& h : hbm)
        h->enable_loosely_timed();
    noc.enable_loosely_timed();
    for (size_t t = 0; t < tiles.size(); ++t)
        tiles[t].dma.set_loosely_timed(*lt_scheduler_);
}

std::vector<std::string> Platform::blocked_engines() const {
    std::vector<std::string> lines;
    for (size_t t = 0; t < tiles.size(); ++t)
        for (auto& l : tiles[t].pe.blocked_report())
            lines.push_back(l);
    return lines;
}

std::vector<std::string> Platform::outstanding_report() const {
    std::vector<std::string> lines;
    for (size_t t = 0; t < tiles.size(); ++t)
        for (auto& l : tiles[t].dma.outstanding_report())
            lines.push_back(l);
    return lines;
}

} // namespace nctlm
