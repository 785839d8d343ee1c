#include "models/link/chip_topology.h"

#include <stdexcept>

namespace nctlm {

ChipTopology::ChipTopology(uint32_t chips, ChipTopologyKind kind, uint32_t torus_width)
    : chips_(chips), kind_(kind), width_(kind == ChipTopologyKind::Ring ? chips : torus_width), height_(1) {
    if (chips == 0)
        throw std::invalid_argument("a platform needs at least one chip");
    if (width_ == 0 || chips % width_ != 0)
        throw std::invalid_argument("link.torus_width (" + std::to_string(torus_width) + ") must divide platform.chips (" +
                                    std::to_string(chips) + ")");
    height_ = chips / width_;
}

std::string ChipTopology::port_name(uint32_t port) const {
    static const char* torus[] = {"x+", "x-", "y+", "y-"};
    static const char* ring[] = {"+", "-"};
    return kind_ == ChipTopologyKind::Torus ? torus[port] : ring[port];
}

uint32_t ChipTopology::neighbor(uint32_t chip, uint32_t port) const {
    int dim = int(port / 2);
    uint32_t k = dim_size(dim), c = coord(chip, dim);
    uint32_t next = port % 2 == 0 ? (c + 1) % k : (c + k - 1) % k;
    return dim == 0 ? chip - c + next : next * width_ + chip % width_;
}

std::vector<ChipTopology::Hop> ChipTopology::route(uint32_t from, uint32_t to) const {
    std::vector<Hop> hops;
    uint32_t at = from;
    for (int dim = 0; dim < (kind_ == ChipTopologyKind::Torus ? 2 : 1); ++dim) {
        uint32_t k = dim_size(dim);
        uint32_t plus = (coord(to, dim) + k - coord(at, dim)) % k;  // hops the + way
        if (plus == 0)
            continue;
        bool up = plus <= k - plus;  // minimal; a tie goes the + way
        uint32_t port = uint32_t(2 * dim) + (up ? 0u : 1u);
        uint32_t vc = 0;
        for (uint32_t n = up ? plus : k - plus; n > 0; --n) {
            uint32_t c = coord(at, dim);
            if ((up && c == k - 1) || (!up && c == 0))
                vc = 1;  // crosses the dateline: channel 1 from here on in this dimension
            hops.push_back({at, port, vc});
            at = neighbor(at, port);
        }
    }
    return hops;
}

std::vector<uint32_t> ChipTopology::ring_order(uint32_t n) const {
    if (n == 0 || n > chips_)
        throw std::invalid_argument("a ring of " + std::to_string(n) + " chips on a platform of " +
                                    std::to_string(chips_));
    std::vector<uint32_t> order;
    uint32_t rows = n / width_;
    if (kind_ == ChipTopologyKind::Torus && n % width_ == 0 && rows >= 2 && rows % 2 == 0 && width_ >= 2) {
        // Along row 0, then snake back through rows 1.. over columns 1.., and up column 0.
        for (uint32_t x = 0; x < width_; ++x)
            order.push_back(x);
        for (uint32_t y = 1; y < rows; ++y)
            for (uint32_t i = 0; i + 1 < width_; ++i) {
                uint32_t x = y % 2 == 1 ? width_ - 1 - i : 1 + i;
                order.push_back(y * width_ + x);
            }
        for (uint32_t y = rows; y-- > 1;)
            order.push_back(y * width_);
        return order;
    }
    for (uint32_t c = 0; c < n; ++c)
        order.push_back(c);
    return order;
}

} // namespace nctlm
