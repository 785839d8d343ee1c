// The resources a flow crosses between a tile and a stack of any chip, as pure logic: the NoC links
// of every chip it passes (numbered chip x links + link) and the NeuronLink directions of its hops
// (numbered chip x ports + port: the direction leaving that chip by that port), there and back.
// Another chip's stack: the tile's NoC to the link port of the first hop of ChipTopology::route,
// each hop, the NoC of every chip passed (arrival port to the next port) and the far NoC to the
// stack; the response comes back the same way on the opposite directions (the cable's other one).
#pragma once

#include "models/link/chip_topology.h"
#include "models/noc/topology.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace nctlm::flow {

struct ChipRoute {
    // NoC links (chip x links + link); both listed chip by chip in the order the request passes them.
    std::vector<uint32_t> there_noc, back_noc;
    std::vector<uint32_t> there_link, back_link;  // NeuronLink directions (chip x ports + port)
    std::vector<uint32_t> chips;                  // the chips whose NoC it crosses, in order
};

class ChipRoutes {
public:
    // `noc`: every chip's NoC (with its link ports when there are several chips); `wiring`: null
    // on one chip.
    ChipRoutes(const Topology& noc, uint32_t tiles, uint32_t stacks, const ChipTopology* wiring);
    // From tile `tile` of chip `from` to stack `stack` of chip `to`.
    ChipRoute route(uint32_t from, uint32_t tile, uint32_t to, uint32_t stack) const;

private:
    Topology noc_;
    uint32_t tiles_, stacks_;
    std::optional<ChipTopology> wiring_;
};

} // namespace nctlm::flow
