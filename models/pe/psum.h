// PSUM: the tensor engine's accumulation buffer (trn1: 2 MiB = 128 partitions x 16 KiB, 8 banks of
// 2 KiB per partition). The tensor engine writes accumulators, the vector engine reads them out.
#pragma once

#include "models/pe/partitioned_memory.h"
#include "models/pe/pe_config.h"

namespace nctlm {

class Psum : public PartitionedMemory {
public:
    Psum(sc_core::sc_module_name name, const PeConfig& cfg)
        : PartitionedMemory(name, cfg.sbuf_partitions, cfg.psum_partition_bytes, cfg.psum_partition_bandwidth,
                            cfg.psum_latency) {}
};

} // namespace nctlm
