#include "models/flow/chip_routes.h"

#include <stdexcept>

namespace nctlm::flow {

ChipRoutes::ChipRoutes(const Topology& noc, uint32_t tiles, uint32_t stacks, const ChipTopology* wiring)
    : noc_(noc), tiles_(tiles), stacks_(stacks), wiring_(wiring ? std::optional<ChipTopology>(*wiring) : std::nullopt) {}

ChipRoute ChipRoutes::route(uint32_t from, uint32_t tile, uint32_t to, uint32_t stack) const {
    ChipRoute r;
    const uint32_t links = uint32_t(noc_.links());
    uint32_t chip = from, initiator = tile;
    auto cross_noc = [&](uint32_t dest) {
        for (uint32_t l : noc_.request_route(initiator, dest))
            r.there_noc.push_back(chip * links + l);
        for (uint32_t l : noc_.response_route(dest, initiator))
            r.back_noc.push_back(chip * links + l);
        r.chips.push_back(chip);
    };
    if (chip != to) {
        if (!wiring_)
            throw std::invalid_argument("flow: a route to another chip on a one-chip platform");
        const uint32_t ports = wiring_->ports();
        for (const ChipTopology::Hop& h : wiring_->route(chip, to)) {
            cross_noc(stacks_ + h.port);
            const uint32_t next = wiring_->neighbor(h.chip, h.port), arrival = wiring_->arrival_port(h.port);
            r.there_link.push_back(h.chip * ports + h.port);
            r.back_link.push_back(next * ports + arrival);  // the cable's other direction
            chip = next;
            initiator = tiles_ + arrival;
        }
    }
    cross_noc(stack);
    return r;
}

} // namespace nctlm::flow
