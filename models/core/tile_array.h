// The chip's N NeuronCore tiles, built from config. A plain container, not a module, so the tiles
// sit directly under the platform in the hierarchy (top.tile0.dma...).
#pragma once

#include "models/core/neuron_core.h"

#include <memory>
#include <vector>

namespace nctlm {

class TileArray {
public:
    TileArray(uint32_t tiles, const DmaConfig& dma_cfg, const PeConfig& pe_cfg);  // call inside the parent's constructor
    size_t size() const { return tiles_.size(); }
    NeuronCore& operator[](size_t i) { return *tiles_.at(i); }
    const NeuronCore& operator[](size_t i) const { return *tiles_.at(i); }

private:
    std::vector<std::unique_ptr<NeuronCore>> tiles_;
};

} // namespace nctlm
