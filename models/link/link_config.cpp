#include "models/link/link_config.h"

namespace nctlm {

const FieldList<LinkConfig>& LinkConfig::fields() {
    using C = LinkConfig;
    static const FieldList<C> f = {
        choice("topology", &C::topology, {{"torus", ChipTopologyKind::Torus}, {"ring", ChipTopologyKind::Ring}},
               "torus",
               "how the chips are wired: a 2-D torus (4 links per chip: x+, x-, y+, y-) or a ring (2 links per chip)")
            .setting("the platform's wiring: trn1.32xlarge and trn2.48xlarge wire their 16 chips as a 4x4 2D torus "
                     "(instance architecture pages)"),
        count("torus_width", &C::torus_width, "4", 1, 64,
              "chips per row of the torus (x); rows (y) = platform.chips / torus_width")
            .documented("trn1-topology and trn2.48xlarge diagrams: 4 chips per row, 4 rows"),
        bandwidth("bandwidth", &C::wire_bandwidth, "48 GB/s",
                  "one link, one direction; the instance pages give bytes per second per chip over all its links")
            .assumed("x0.5..x2", "per-chip NeuronLink figure / 4 links / 2 directions: how the per-chip figure "
                                 "splits over directions is not public"),
        duration("latency", &C::latency, "200 ns",
                 "one link traversal (SerDes, PHY, wire) before the first byte lands at the far chip", 1e9)
            .assumed("50 ns..1 us", "no public per-link figure; the public 1-2 us per ring hop (intra-node "
                                    "collectives page) includes DMA start and synchronization"),
        count("credits", &C::credits, "32", 1, 1 << 16,
              "requests in flight per link direction and virtual channel: the far chip's receive buffer; a full "
              "link withholds END_REQ")
            .assumed("8..256", "no public figure; covers the bandwidth-delay product of a 2 KiB-burst link"),
        bytes("request_bytes", &C::request_bytes, "64 B", 1, 4096,
              "a read request's or a write acknowledgement's header on the wire")
            .assumed("16 B..128 B", "one header flit, as the NoC's"),
    };
    return f;
}

} // namespace nctlm
