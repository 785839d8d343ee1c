#include "models/dma/dma_config.h"

namespace nctlm {

const FieldList<DmaConfig>& DmaConfig::fields() {
    using C = DmaConfig;
    static const FieldList<C> f = {
        frequency("clock", &C::clock, nullptr, "DMA clock (assumed equal to the 1.4 GHz Scalar/GpSimd clock)"),
        count("queues", &C::queues, "16", 1, 64, "queues per core (Neuron DMA guide: 16 queues per engine)"),
        count("channels", &C::channels, nullptr, 1, 256, "channel pool size: descriptors in progress at once"),
        count("queue_channels", &C::queue_channels, "1", 1, 256,
              "capacity of one queue in channels (the reference PE DMA path uses 1)"),
        bytes("burst_size", &C::burst_size, nullptr, 64, 1 << 20,
              "burst cut from a descriptor; must divide hbm.interleave so a burst hits one PC"),
        count("descriptor_cycles", &C::descriptor_cycles, nullptr, 0, 1000000,
              "decode a 16-byte descriptor once a channel holds it"),
        count("completion_cycles", &C::completion_cycles, nullptr, 0, 1000000,
              "last byte written to SBUF -> completion ring / semaphore updated"),
        count("engines", &C::engines, "16", 1, 256, "DMA engines per core (Neuron arch guide: 16)"),
        bandwidth("engine_bandwidth", &C::engine_bandwidth, nullptr,
                  "per engine data rate (Neuron arch guide: 27.2 GB/s; DMA guide: 17 B/ns)"),
        choice("channel_release", &C::channel_release,
               {{"on_accept", ChannelRelease::OnAccept}, {"on_response", ChannelRelease::OnResponse}},
               "on_accept", "free a channel when the next hop accepts (END_REQ) or hold it for the round trip"),
        duration("start_latency", &C::start_latency, "0 ns",
                 "per DMA instruction from the PE: semaphore wait + descriptor generation + queue start"),
    };
    return f;
}

} // namespace nctlm
