#pragma once

#include "models/common/config.h"

namespace nctlm {

// How a platform's chips are wired by NeuronLink (docs/models/link.md).
enum class ChipTopologyKind { Ring, Torus };

// The chip-to-chip links; every key mirrors `link.*` in the platform YAML. Read only when
// `platform.chips` > 1 (a one-chip platform has no links and needs no section).
struct LinkConfig {
    ChipTopologyKind topology = ChipTopologyKind::Torus;
    uint32_t torus_width = 0;      // chips per row of a 2-D torus (rows = chips / width)
    Bandwidth wire_bandwidth;      // `bandwidth`: one link, one direction
    Duration latency;              // one traversal: SerDes, PHY and wire, before the first byte lands
    uint32_t credits = 0;          // requests in flight per link direction and virtual channel
    uint64_t request_bytes = 0;    // header of a read request or a write acknowledgement on the wire

    static const FieldList<LinkConfig>& fields();
};

} // namespace nctlm
