// What a request for another chip's memory carries across NeuronLink: its whole route (every hop's
// port and virtual channel, fixed when it leaves its own chip so that the dateline rule holds over
// the whole route), how far along it is, and, per link crossed, the routing fields of the NoC
// before it (TransferExt::src_tile and ::stack), which the next NoC overwrites and the response
// restores on its way back. Attached by the source chip's NoC, removed when the response is home.
#pragma once

#include "models/link/chip_topology.h"

#include <cstdint>
#include <tlm>
#include <vector>

namespace nctlm {

struct LinkRouteExt : tlm::tlm_extension<LinkRouteExt> {
    uint32_t source_chip = 0, dest_chip = 0;
    std::vector<ChipTopology::Hop> route;
    uint32_t hop = 0;  // the next hop to take (route.size(): at the destination chip)
    struct Saved {
        uint32_t src_tile, stack;
    };
    std::vector<Saved> saved;  // one per link crossed, innermost last

    const ChipTopology::Hop& next() const { return route.at(hop); }
    tlm_extension_base* clone() const override { return new LinkRouteExt(*this); }
    void copy_from(const tlm_extension_base& other) override { *this = static_cast<const LinkRouteExt&>(other); }
};

} // namespace nctlm
