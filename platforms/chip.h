// One chip of a platform: its NeuronCore tiles, its NoC and one HBM controller per stack, bound.
// `Chip` is a plain container (its modules sit in the hierarchy of the module that constructs it:
// a one-chip platform keeps top.tile0, top.noc, top.hbm0); on a multi-chip platform each chip is a
// `ChipModule` named chip<c> (top.chip1.noc, ...).
#pragma once

#include "models/core/tile_array.h"
#include "models/hbm/address_map.h"
#include "models/hbm/hbm_controller.h"
#include "models/link/chip_topology.h"
#include "models/noc/noc.h"
#include "platforms/platform_config.h"

#include <memory>
#include <systemc>
#include <vector>

namespace nctlm {

class Chip {
public:
    // Call inside the parent module's constructor. `chips`: the platform's wiring (null: one chip).
    Chip(const PlatformConfig& cfg, const AddressMap& map, const ChipTopology* chips, uint32_t index);
    const uint32_t index;
    TileArray tiles;
    Noc noc;
    std::vector<std::unique_ptr<HbmController>> hbm;
};

class ChipModule : public sc_core::sc_module {
public:
    ChipModule(sc_core::sc_module_name name, const PlatformConfig& cfg, const AddressMap& map,
               const ChipTopology& chips, uint32_t index)
        : sc_module(name), chip(cfg, map, &chips, index) {}
    Chip chip;
};

} // namespace nctlm
