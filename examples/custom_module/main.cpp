// A chip assembled from nctlm blocks with one HBM stack replaced by your own SramTarget; the same
// DMA read goes to the SRAM (stack 0) and to HBM (stack 1), and the NoC carries both.
//   sram_stack [platform.yaml]
#include "models/common/sim.h"
#include "models/checker/bind.h"
#include "models/core/tile_array.h"
#include "models/hbm/address_map.h"
#include "models/hbm/hbm_controller.h"
#include "models/noc/noc.h"
#include "platforms/platform_config.h"
#include "sram_target.h"

#include <cstdio>
#include <fmt/format.h>
#include <memory>

using namespace nctlm;

// Like nctlm's Platform, but stack 0 is ours. Members are built in declaration order, and the
// address map is a member, so it outlives every module that was given it.
struct SramChip : sc_core::sc_module {
    SramChip(sc_core::sc_module_name name, const PlatformConfig& cfg)
        : sc_module(name), map(cfg.hbm), tiles(cfg.platform.tiles, cfg.dma, cfg.pe),
          noc("noc", cfg.noc, map, cfg.platform.tiles), sram("sram", SramConfig{}) {
        // Through nctlm::bind, as Platform binds: a build with NCTLM_PROTOCOL_CHECK checks every hop.
        // Stack sockets bind in stack order: 0 is the SRAM.
        nctlm::bind(noc.stack_sockets, sram.socket, "noc_sram");
        for (uint32_t s = 1; s < cfg.hbm.stacks; ++s) {
            hbm.push_back(std::make_unique<HbmController>(fmt::format("hbm{}", s).c_str(), cfg.hbm, map, s));
            nctlm::bind(noc.stack_sockets, hbm.back()->socket, fmt::format("noc_hbm{}", s));
        }
        for (size_t t = 0; t < tiles.size(); ++t)
            nctlm::bind(tiles[t].dma.socket, noc.tile_sockets, fmt::format("tile{}_noc", t));
    }
    const AddressMap map;
    TileArray tiles;
    Noc noc;
    SramTarget sram;
    std::vector<std::unique_ptr<HbmController>> hbm;
};

int sc_main(int argc, char** argv) {
    std::string file = argc > 1 ? argv[1] : std::string(NCTLM_CONFIG_DIR) + "/platforms/trn1.yaml";
    PlatformConfig cfg;
    try {
        cfg = PlatformConfig::load(ConfigTree::from_file(file));
    } catch (const ConfigError& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 2;
    }
    if (cfg.hbm.stacks < 2) {
        std::fprintf(stderr, "%s: needs at least 2 HBM stacks\n", file.c_str());
        return 2;
    }
    init_kernel();
    SramChip chip("chip", cfg);

    DmaDescriptor to_sram, to_hbm;
    to_sram.address = chip.map.stack_base(0);
    to_hbm.address = chip.map.stack_base(1);
    to_sram.bytes = to_hbm.bytes = 32 * 1024;
    sc_core::sc_spawn([&] {
        sc_core::sc_event done;
        for (DmaDescriptor* d : {&to_sram, &to_hbm}) {  // one after the other, each on an idle chip
            d->on_complete = [&](DmaDescriptor&) { done.notify(sc_core::SC_ZERO_TIME); };
            chip.tiles[0].dma.post(*d);
            sc_core::wait(done);
        }
    });
    sc_core::sc_start();
    if (sc_core::sc_get_status() != sc_core::SC_STOPPED)
        sc_core::sc_stop();

    double sram_ns = to_sram.t_done - to_sram.t_post, hbm_ns = to_hbm.t_done - to_hbm.t_post;
    std::printf("32 KiB read from tile 0: SRAM stack %.1f ns (%llu bursts), HBM stack %.1f ns\n", sram_ns,
                (unsigned long long)chip.sram.bursts, hbm_ns);
    // Both completed, and every burst of the first went through our module.
    bool ok = to_sram.t_done > 0 && to_hbm.t_done > 0 && chip.sram.bytes == to_sram.bytes && !to_sram.failed;
    return ok ? 0 : 3;
}
