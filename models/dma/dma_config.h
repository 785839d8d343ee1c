#pragma once

#include "models/common/config.h"

namespace nctlm {

enum class ChannelRelease { OnAccept, OnResponse };

// A NeuronCore's DMA block; every key mirrors `dma.*` in the platform YAML.
struct DmaConfig {
    Frequency clock;
    uint32_t queues = 0;
    uint32_t channels = 0;           // channel pool shared by the queues
    uint32_t queue_channels = 0;     // most channels one queue holds at once (its capacity)
    uint64_t burst_size = 0;         // a descriptor is cut into bursts of this size
    uint32_t descriptor_cycles = 0;  // decode a descriptor once it holds a channel
    uint32_t completion_cycles = 0;  // last data written -> completion visible (semaphore/ring)
    uint32_t engines = 0;
    Bandwidth engine_bandwidth;      // theoretical, per engine; raw descriptors move engines x this
    uint32_t partitions_per_engine = 0;  // SBUF partitions one engine serves (dma_cost.h)
    Duration packet_overhead;        // engine time per packet of a PE DMA instruction besides its bytes
    double transpose_efficiency = 1; // a DMA transpose moves at this fraction of the copy rate
    ChannelRelease channel_release = ChannelRelease::OnAccept;
    Duration start_latency;          // per DMA instruction issued by the PE (not per descriptor)

    Bandwidth data_bandwidth() const { return Bandwidth{engine_bandwidth.bytes_per_s * engines}; }
    static const FieldList<DmaConfig>& fields();
};

} // namespace nctlm
