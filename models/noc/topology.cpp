#include "models/noc/topology.h"

#include <fmt/format.h>
#include <stdexcept>

namespace nctlm {

// Link ids: [tile up][tile down][stack down][stack up][ring cw][ring ccw], each block in index order.
Topology::Topology(uint32_t tiles, uint32_t stacks) : tiles_(tiles), stacks_(stacks) {
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
    request_.resize(size_t(tiles) * stacks);
    response_.resize(size_t(tiles) * stacks);
    for (uint32_t t = 0; t < tiles; ++t)
        for (uint32_t s = 0; s < stacks; ++s) {
            auto& req = request_[t * stacks + s];
            req.push_back(id(LinkKind::TileToRouter, t));
            for (uint32_t l : ring_path(router_of_tile(t), s))
                req.push_back(l);
            req.push_back(id(LinkKind::RouterToStack, s));
            auto& resp = response_[t * stacks + s];
            resp.push_back(id(LinkKind::StackToRouter, s));
            for (uint32_t l : ring_path(s, router_of_tile(t)))
                resp.push_back(l);
            resp.push_back(id(LinkKind::RouterToTile, t));
        }
}

uint32_t Topology::id(LinkKind k, uint32_t index) const {
    uint32_t base = 0;
    const uint32_t sizes[] = {tiles_, tiles_, stacks_, stacks_, stacks_, stacks_};
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
    }
    return "?";
}

} // namespace nctlm
