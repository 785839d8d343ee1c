#include "platforms/platform.h"

#include "models/checker/bind.h"
#include "platforms/flow_tables.h"

#include <fmt/format.h>

namespace nctlm {

Platform::Platform(sc_core::sc_module_name name, const PlatformConfig& cfg)
    : sc_module(name), config(cfg), address_map(cfg.hbm, cfg.platform.chips, cfg.platform.chip_address_bit),
      topology_(cfg.platform.chips > 1 ? std::optional<ChipTopology>(ChipTopology(cfg.platform.chips, cfg.link))
                                       : std::nullopt),
      chips_(build_chips()), tiles(chips_.front()->tiles), noc(chips_.front()->noc), hbm(chips_.front()->hbm) {
    wire_links();
    if (cfg.sim.timing == TimingMode::Lt)
        enable_loosely_timed();
    if (cfg.sim.timing == TimingMode::Flow)
        enable_flow();
}

void Platform::enable_flow() {
    FlowTableFound found = flow_table_for(config.hbm);
    flow_table_origin_ = found.origin;
    std::vector<FlowNetwork::ChipParts> parts;
    for (Chip* chip : chips_) {
        FlowNetwork::ChipParts p{{}, chip->noc.name()};
        for (auto& h : chip->hbm)
            p.controllers.push_back(h.get());
        parts.push_back(std::move(p));
    }
    flow_ = std::make_unique<FlowNetwork>("flow", config.dma, config.noc, config.hbm, address_map, noc.topology(),
                                          std::move(parts), chip_topology(), config.link, std::move(found.table),
                                          config.sim.flow_sharing == FlowSharing::Fair ? flow::Sharing::Fair
                                                                                       : flow::Sharing::InOrder);
    for (Chip* chip : chips_)
        for (size_t t = 0; t < chip->tiles.size(); ++t)
            flow_->attach(chip->tiles[t].dma, chip->index);
    for (uint32_t c = 0; topology_ && c < topology_->chips(); ++c)
        for (uint32_t p = 0; p < topology_->ports(); ++p) {
            auto [l, end_a] = cable(c, p);
            l->count_flow_bytes(end_a ? 0 : 1, [f = flow_.get(), c, p] { return f->neuron_link_bytes(c, p); });
        }
}

std::vector<Chip*> Platform::build_chips() {
    if (!topology_) {
        single_ = std::make_unique<Chip>(config, address_map, nullptr, 0);
        return {single_.get()};
    }
    std::vector<Chip*> all;
    for (uint32_t c = 0; c < topology_->chips(); ++c) {
        modules_.push_back(
            std::make_unique<ChipModule>(fmt::format("chip{}", c).c_str(), config, address_map, *topology_, c));
        all.push_back(&modules_.back()->chip);
    }
    return all;
}

void Platform::wire_links() {
    if (!topology_)
        return;
    const ChipTopology& t = *topology_;
    const uint32_t half = t.ports() / 2, vcs = ChipTopology::kVirtualChannels;
    for (uint32_t c = 0; c < t.chips(); ++c)
        for (uint32_t k = 0; k < half; ++k)
            links.push_back(std::make_unique<NeuronLink>(
                fmt::format("link{}_{}", c, t.kind() == ChipTopologyKind::Torus ? (k == 0 ? "x" : "y") : "r").c_str(),
                config.link, vcs));
    // Port p of chip c: end a of its own cable for p = 2k, end b of the neighbour's cable for 2k + 1.
    // Every socket is bound from its own chip in (port, virtual channel) order: the NoC's link
    // sockets and its tile sockets after the tiles, and each cable end's sockets in channel order.
    for (uint32_t c = 0; c < t.chips(); ++c) {
        Noc& n = chips_[c]->noc;
        for (uint32_t p = 0; p < t.ports(); ++p) {
            auto [l, end_a] = cable(c, p);
            for (uint32_t vc = 0; vc < vcs; ++vc)
                nctlm::bind(n.link_sockets, end_a ? l->from_a : l->from_b,
                            fmt::format("chip{}_noc_link{}_vc{}", c, p, vc));
        }
        for (uint32_t p = 0; p < t.ports(); ++p) {
            auto [l, end_a] = cable(c, p);
            for (uint32_t vc = 0; vc < vcs; ++vc)
                nctlm::bind(end_a ? l->to_a : l->to_b, n.tile_sockets, fmt::format("chip{}_link{}_vc{}_noc", c, p, vc));
        }
    }
}

std::pair<NeuronLink*, bool> Platform::cable(uint32_t chip, uint32_t port) const {
    const ChipTopology& t = *topology_;
    const uint32_t half = t.ports() / 2;
    if (port % 2 == 0)
        return {links.at(chip * half + port / 2).get(), true};
    return {links.at(t.neighbor(chip, port) * half + port / 2).get(), false};
}

void Platform::enable_loosely_timed() {
    // The quantum is the scheduler's lookahead past the kernel's next activity; also published as
    // the TLM global quantum for initiators of a user's own that keep a tlm_quantumkeeper.
    tlm::tlm_global_quantum::instance().set(to_sc(config.sim.quantum));
    lt_scheduler_ = std::make_unique<DmaLtScheduler>("dma_lt", config.sim.quantum.ns);
    for (Chip* chip : chips_) {
        for (auto& h : chip->hbm)
            h->enable_loosely_timed();
        chip->noc.enable_loosely_timed();
        for (size_t t = 0; t < chip->tiles.size(); ++t)
            chip->tiles[t].dma.set_loosely_timed(*lt_scheduler_);
    }
    for (auto& l : links)
        l->enable_loosely_timed();
}

std::vector<std::string> Platform::blocked_engines() const {
    std::vector<std::string> lines;
    for (const Chip* chip : chips_)
        for (size_t t = 0; t < chip->tiles.size(); ++t)
            for (auto& l : chip->tiles[t].pe.blocked_report())
                lines.push_back(l);
    return lines;
}

std::vector<std::string> Platform::outstanding_report() const {
    std::vector<std::string> lines;
    for (const Chip* chip : chips_)
        for (size_t t = 0; t < chip->tiles.size(); ++t)
            for (auto& l : chip->tiles[t].dma.outstanding_report())
                lines.push_back(l);
    return lines;
}

} // namespace nctlm
