#include "models/noc/topology.h"

#include <fmt/format.h>
#include <stdexcept>

namespace nctlm {

// Link ids: [tile up][tile down][stack down][stack up][ring cw][ring ccw][router to port][port to
// router], each block in index order (a one-chip NoC has no port links: its ids are as before).
Topology::Topology(uint32_t tiles, uint32_t stacks, uint32_t link_ports)
    : tiles_(tiles), stacks_(stacks), ports_(link_ports) {
    if (tiles == 0 || stacks == 0)
        throw std::invalid_argument("a NoC needs at least one tile and one stack");
    auto add = [&](LinkKind k, uint32_t n) {
        for (uint32_t i = 0; i < n; ++i) {
            kinds_.push_back(k);
            index_.push_back(i);
        }
    };
    add(LinkKind::TileToRouter, tiles);
    add(LinkKind::RouterToTile, tiles);
    add(LinkKind::RouterToStack, stacks);
    add(LinkKind::StackToRouter, stacks);
    add(LinkKind::RingClockwise, stacks);
    add(LinkKind::RingCounter, stacks);
    add(LinkKind::RouterToPort, link_ports);
    add(LinkKind::PortToRouter, link_ports);
    const uint32_t inits = tiles + link_ports, dests = stacks + link_ports;
    request_.resize(size_t(inits) * dests);
    response_.resize(size_t(inits) * dests);
    for (uint32_t i = 0; i < inits; ++i)
        for (uint32_t d = 0; d < dests; ++d) {
            auto& req = request_[i * dests + d];
            req.push_back(i < tiles ? id(LinkKind::TileToRouter, i) : id(LinkKind::PortToRouter, i - tiles));
            for (uint32_t l : ring_path(router_of_initiator(i), router_of_dest(d)))
                req.push_back(l);
            req.push_back(d < stacks ? id(LinkKind::RouterToStack, d) : id(LinkKind::RouterToPort, d - stacks));
            auto& resp = response_[i * dests + d];
            resp.push_back(d < stacks ? id(LinkKind::StackToRouter, d) : id(LinkKind::PortToRouter, d - stacks));
            for (uint32_t l : ring_path(router_of_dest(d), router_of_initiator(i)))
                resp.push_back(l);
            resp.push_back(i < tiles ? id(LinkKind::RouterToTile, i) : id(LinkKind::RouterToPort, i - tiles));
        }
}

uint32_t Topology::id(LinkKind k, uint32_t index) const {
    uint32_t base = 0;
    const uint32_t sizes[] = {tiles_, tiles_, stacks_, stacks_, stacks_, stacks_, ports_, ports_};
    for (int i = 0; i < int(k); ++i)
        base += sizes[i];
    return base + index;
}

std::vector<uint32_t> Topology::ring_path(uint32_t from, uint32_t to) const {
    std::vector<uint32_t> path;
    uint32_t n = stacks_;
    uint32_t cw = (to + n - from) % n, ccw = (from + n - to) % n;
    uint32_t r = from;
    if (cw <= ccw)
        for (uint32_t i = 0; i < cw; ++i, r = (r + 1) % n)
            path.push_back(id(LinkKind::RingClockwise, r));
    else
        for (uint32_t i = 0; i < ccw; ++i, r = (r + n - 1) % n)
            path.push_back(id(LinkKind::RingCounter, r));
    return path;
}

uint32_t Topology::ring_hops(uint32_t tile, uint32_t stack) const {
    return uint32_t(request_route(tile, stack).size()) - 2;
}

std::string Topology::link_name(size_t link) const {
    uint32_t i = index_[link];
    switch (kinds_[link]) {
    case LinkKind::TileToRouter: return fmt::format("tile{}_to_router", i);
    case LinkKind::RouterToTile: return fmt::format("router_to_tile{}", i);
    case LinkKind::RouterToStack: return fmt::format("router_to_stack{}", i);
    case LinkKind::StackToRouter: return fmt::format("stack{}_to_router", i);
    case LinkKind::RingClockwise: return fmt::format("ring{}_cw", i);
    case LinkKind::RingCounter: return fmt::format("ring{}_ccw", i);
    case LinkKind::RouterToPort: return fmt::format("router_to_link{}", i);
    case LinkKind::PortToRouter: return fmt::format("link{}_to_router", i);
    }
    return "?";
}

} // namespace nctlm
