#pragma once

#include "models/common/config.h"
#include "models/common/sim_config.h"
#include "models/dma/dma_config.h"
#include "models/hbm/hbm_config.h"
#include "models/link/link_config.h"
#include "models/host/host_config.h"
#include "models/pe/pe_config.h"
#include "models/noc/noc_config.h"

namespace nctlm {

// `platform.*`: the chip as a whole.
struct ChipConfig {
    std::string name;
    uint32_t tiles = 0;
    uint32_t chips = 1;              // chips joined by NeuronLink (link section)
    uint32_t chip_address_bit = 44;  // chip c's memory at c << chip_address_bit
    static const FieldList<ChipConfig>& fields();
};

// Everything a platform file describes, one struct per section.
struct PlatformConfig {
    ChipConfig platform;
    DmaConfig dma;
    NocConfig noc;
    HbmConfig hbm;
    LinkConfig link;  // NeuronLink between chips (used when platform.chips > 1)
    PeConfig pe;
    HostConfig host;
    SimConfig sim;  // simulator switches (timing mode), optional in a platform file

    // Loads every section and checks the rules that span sections; throws ConfigError.
    static PlatformConfig load(const ConfigTree& tree);
    // Top-level sections a run may contain (platform sections + testbench + workload).
    static const std::vector<std::string>& sections();
    // Every parameter of every platform section, with its provenance (describe, sensitivity).
    static std::vector<FieldInfo> field_infos();
};

} // namespace nctlm
