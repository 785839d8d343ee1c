#include "models/core/tile_array.h"

#include <fmt/format.h>

namespace nctlm {

TileArray::TileArray(uint32_t tiles, const DmaConfig& dma_cfg, const PeConfig& pe_cfg) {
    for (uint32_t t = 0; t < tiles; ++t)
        tiles_.push_back(std::make_unique<NeuronCore>(fmt::format("tile{}", t).c_str(), dma_cfg, pe_cfg, t));
}

} // namespace nctlm
