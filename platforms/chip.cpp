#include "platforms/chip.h"

#include "models/checker/bind.h"

#include <fmt/format.h>

namespace nctlm {

Chip::Chip(const PlatformConfig& cfg, const AddressMap& map, const ChipTopology* chips, uint32_t index)
    : index(index), tiles(cfg.platform.tiles, cfg.dma, cfg.pe), noc("noc", cfg.noc, map, cfg.platform.tiles, chips, index) {
    for (uint32_t s = 0; s < cfg.hbm.stacks; ++s) {
        hbm.push_back(std::make_unique<HbmController>(fmt::format("hbm{}", s).c_str(), cfg.hbm, map, s, index));
        nctlm::bind(noc.stack_sockets, hbm.back()->socket, fmt::format("noc_hbm{}", s));
    }
    for (size_t t = 0; t < tiles.size(); ++t)
        nctlm::bind(tiles[t].dma.socket, noc.tile_sockets, fmt::format("tile{}_noc", t));
}

} // namespace nctlm
