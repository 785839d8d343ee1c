// The NoC's shape, as pure logic: one router per HBM stack on a bidirectional ring; each stack
// hangs off its router; tile t attaches to router t x stacks / tiles, NeuronLink port p (on a
// multi-chip platform) to router p x stacks / ports. Links are one-directional and numbered; a
// route is the list of links a packet crosses. Endpoints: initiators are the tiles then the link
// ports (requests arriving from other chips), destinations the stacks then the link ports.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nctlm {

enum class LinkKind {
    TileToRouter,
    RouterToTile,
    RouterToStack,
    StackToRouter,
    RingClockwise,
    RingCounter,
    RouterToPort,
    PortToRouter
};

class Topology {
public:
    Topology(uint32_t tiles, uint32_t stacks, uint32_t link_ports = 0);
    uint32_t router_of_tile(uint32_t tile) const { return tile * stacks_ / tiles_; }
    uint32_t router_of_port(uint32_t port) const { return port * stacks_ / ports_; }
    uint32_t link_ports() const { return ports_; }
    size_t links() const { return kinds_.size(); }
    LinkKind kind(size_t link) const { return kinds_[link]; }
    std::string link_name(size_t link) const;
    // Links from an initiator (tile t, or tiles + port p) to a destination (stack s, or stacks + port
    // p) in the request direction, and back in the response direction.
    const std::vector<uint32_t>& request_route(uint32_t initiator, uint32_t dest) const {
        return request_[initiator * (stacks_ + ports_) + dest];
    }
    const std::vector<uint32_t>& response_route(uint32_t dest, uint32_t initiator) const {
        return response_[initiator * (stacks_ + ports_) + dest];
    }
    // Ring hops between a tile's router and a stack's router (0 = the stack is local).
    uint32_t ring_hops(uint32_t tile, uint32_t stack) const;

private:
    uint32_t id(LinkKind k, uint32_t index) const;
    std::vector<uint32_t> ring_path(uint32_t from, uint32_t to) const;
    uint32_t router_of_initiator(uint32_t i) const { return i < tiles_ ? router_of_tile(i) : router_of_port(i - tiles_); }
    uint32_t router_of_dest(uint32_t d) const { return d < stacks_ ? d : router_of_port(d - stacks_); }
    uint32_t tiles_, stacks_, ports_;
    std::vector<LinkKind> kinds_;
    std::vector<uint32_t> index_;
    std::vector<std::vector<uint32_t>> request_, response_;
};

} // namespace nctlm
