// SBUF: the PE's state buffer (trn1: 24 MiB = 128 partitions x 192 KiB). Engines read operands
// from it and write results to it.
#pragma once

#include "models/pe/partitioned_memory.h"
#include "models/pe/pe_config.h"

namespace nctlm {

class Sbuf : public PartitionedMemory {
public:
    Sbuf(sc_core::sc_module_name name, const PeConfig& cfg)
        : PartitionedMemory(name, cfg.sbuf_partitions, cfg.sbuf_partition_bytes, cfg.sbuf_partition_bandwidth,
                            cfg.sbuf_latency) {}
};

} // namespace nctlm
