// The NoC's shape, as pure logic: one router per HBM stack on a bidirectional ring; each stack
// hangs off its router; tile t attaches to router t x stacks / tiles. Links are one-directional
// and numbered; a route is the list of links a packet crosses.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nctlm {

enum class LinkKind { TileToRouter, RouterToTile, RouterToStack, StackToRouter, RingClockwise, RingCounter };

class Topology {
public:
    Topology(uint32_t tiles, uint32_t stacks);
    uint32_t router_of_tile(uint32_t tile) const { return tile * stacks_ / tiles_; }
    size_t links() const { return kinds_.size(); }
    LinkKind kind(size_t link) const { return kinds_[link]; }
    std::string link_name(size_t link) const;
    // Links from tile to stack (request direction) and back (response direction).
    const std::vector<uint32_t>& request_route(uint32_t tile, uint32_t stack) const {
        return request_[tile * stacks_ + stack];
    }
    const std::vector<uint32_t>& response_route(uint32_t stack, uint32_t tile) const {
        return response_[tile * stacks_ + stack];
    }
    // Ring hops between a tile's router and a stack's router (0 = the stack is local).
    uint32_t ring_hops(uint32_t tile, uint32_t stack) const;

private:
    uint32_t id(LinkKind k, uint32_t index) const;
    std::vector<uint32_t> ring_path(uint32_t from, uint32_t to) const;
    uint32_t tiles_, stacks_;
    std::vector<LinkKind> kinds_;
    std::vector<uint32_t> index_;
    std::vector<std::vector<uint32_t>> request_, response_;
};

} // namespace nctlm
