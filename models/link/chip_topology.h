// How NeuronLink wires a platform's chips, as pure logic: which chip each link port reaches, the
// route between two chips and the virtual channel of every hop, and the orders and trees that
// collectives lay over the chips.
//
// Torus (W x H, chip c at x = c % W, y = c / W): four ports per chip, x+ x- y+ y-. Ring: two
// ports, + (to chip c + 1) and - (to chip c - 1). Routes are minimal and dimension-ordered (x,
// then y; ties go the + way). Deadlock freedom over finite link buffers (docs/architecture.md):
// each ring dimension has a dateline between coordinate k - 1 and 0; a hop that crosses it, and
// every later hop in that dimension, uses virtual channel 1, the others channel 0 - so the
// channels' wait-for graph has no cycle inside a dimension, and dimension order leaves none
// between dimensions.
#pragma once

#include "models/link/link_config.h"

#include <cstdint>
#include <string>
#include <vector>

namespace nctlm {

class ChipTopology {
public:
    // Throws std::invalid_argument when the chips do not fill the torus (chips % width != 0).
    ChipTopology(uint32_t chips, ChipTopologyKind kind, uint32_t torus_width);
    ChipTopology(uint32_t chips, const LinkConfig& cfg) : ChipTopology(chips, cfg.topology, cfg.torus_width) {}

    static constexpr uint32_t kVirtualChannels = 2;

    uint32_t chips() const { return chips_; }
    ChipTopologyKind kind() const { return kind_; }
    uint32_t width() const { return width_; }
    uint32_t height() const { return height_; }
    uint32_t ports() const { return kind_ == ChipTopologyKind::Torus ? 4 : 2; }
    std::string port_name(uint32_t port) const;
    // The chip at the far end of `port`, and the port it arrives on there.
    uint32_t neighbor(uint32_t chip, uint32_t port) const;
    uint32_t arrival_port(uint32_t port) const { return port ^ 1u; }

    struct Hop {
        uint32_t chip;  // the chip the hop leaves
        uint32_t port;  // by this port
        uint32_t vc;    // on this virtual channel
    };
    // The hops from one chip to another (empty when equal).
    std::vector<Hop> route(uint32_t from, uint32_t to) const;
    uint32_t hops(uint32_t from, uint32_t to) const { return uint32_t(route(from, to).size()); }

    // `n` distinct chips in a cyclic order whose consecutive chips are neighbours where the
    // topology allows (a Hamiltonian cycle of the first n/W rows of a torus when n is a multiple of
    // W with an even row count, or a whole row; else row-major order, routed). Starts at chip 0.
    std::vector<uint32_t> ring_order(uint32_t n) const;

private:
    uint32_t dim_size(int dim) const { return dim == 0 ? width_ : height_; }
    uint32_t coord(uint32_t chip, int dim) const { return dim == 0 ? chip % width_ : chip / width_; }
    uint32_t chips_;
    ChipTopologyKind kind_;
    uint32_t width_, height_;
};

} // namespace nctlm
