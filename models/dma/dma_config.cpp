#include "models/dma/dma_config.h"

namespace nctlm {

const FieldList<DmaConfig>& DmaConfig::fields() {
    using C = DmaConfig;
    static const FieldList<C> f = {
        frequency("clock", &C::clock, nullptr, "DMA clock (assumed equal to the 1.4 GHz Scalar/GpSimd clock)")
            .assumed("x0.7..x1.5", "= Scalar/GpSimd clock; DMA clock unpublished"),
        count("queues", &C::queues, "16", 1, 64, "queues per core (Neuron DMA guide: 16 queues per engine)")
            .documented("Neuron DMA guide"),
        count("channels", &C::channels, nullptr, 1, 256, "channel pool size: descriptors in progress at once")
            .assumed("8..32", "one per DMA engine (16 engines: Neuron arch guide)"),
        count("queue_channels", &C::queue_channels, "1", 1, 256,
              "capacity of one queue in channels (the reference PE DMA path uses 1)")
            .assumed("1..2", "reference PE DMA path holds one channel per queue"),
        bytes("burst_size", &C::burst_size, nullptr, 64, 1 << 20,
              "burst cut from a descriptor; must divide hbm.interleave so a burst hits one PC")
            .documented("Neuron DMA guide: 32 KiB over 16 engines"),
        count("descriptor_cycles", &C::descriptor_cycles, nullptr, 0, 1000000,
              "decode a 16-byte descriptor once a channel holds it")
            .assumed("x0.5..x2", "5 ns, fits the 141 ns probe"),
        count("completion_cycles", &C::completion_cycles, nullptr, 0, 1000000,
              "last byte written to SBUF -> completion ring / semaphore updated")
            .assumed("x0.5..x2", "10 ns, fits the 141 ns probe"),
        count("engines", &C::engines, "16", 1, 256, "DMA engines per core (Neuron arch guide: 16)")
            .documented("Neuron arch guide"),
        bandwidth("engine_bandwidth", &C::engine_bandwidth, nullptr,
                  "per engine data rate (Neuron arch guide: 27.2 GB/s; DMA guide: 17 B/ns)")
            .documented("Neuron arch guide; calibration.md: DMA bandwidth"),
        choice("channel_release", &C::channel_release,
               {{"on_accept", ChannelRelease::OnAccept}, {"on_response", ChannelRelease::OnResponse}},
               "on_accept", "free a channel when the next hop accepts (END_REQ) or hold it for the round trip")
            .assumed("", "END_REQ release reproduces the b2b pipelining oracle"),
        duration("start_latency", &C::start_latency, "0 ns",
                 "per DMA instruction from the PE: semaphore wait + descriptor generation + queue start")
            .documented("Neuron DMA guide: ~1.3 us on trn1, ~600 ns on trn2"),
    };
    return f;
}

} // namespace nctlm
