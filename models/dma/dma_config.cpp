#include "models/dma/dma_config.h"

namespace nctlm {

const FieldList<DmaConfig>& DmaConfig::fields() {
    using C = DmaConfig;
    static const FieldList<C> f = {
        frequency("clock", &C::clock, nullptr, "DMA clock (assumed equal to the 1.4 GHz Scalar/GpSimd clock)")
            .assumed("x0.7..x1.5", "= Scalar/GpSimd clock; DMA clock unpublished"),
        count("queues", &C::queues, "16", 1, 64, "queues per core (Neuron DMA guide: 16 queues per engine)")
            .documented("NKI DMA overview, DMA Queues: 16 DMA queues per DMA engine (ID 0-15), one queue ID "
                        "across all 16 engines"),
        count("channels", &C::channels, nullptr, 1, 256, "channel pool size: descriptors in progress at once")
            .assumed("8..32", "one per DMA engine (16 engines: Neuron arch guide)"),
        count("queue_channels", &C::queue_channels, "1", 1, 256,
              "capacity of one queue in channels (the reference PE DMA path uses 1)")
            .assumed("1..2", "reference PE DMA path holds one channel per queue"),
        bytes("burst_size", &C::burst_size, nullptr, 64, 1 << 20,
              "burst cut from a descriptor; must divide hbm.interleave so a burst hits one PC")
            .documented("NKI DMA overview, Example 2: a 32 KiB transfer over 16 engines moves 2 KiB per engine"),
        count("descriptor_cycles", &C::descriptor_cycles, nullptr, 0, 1000000,
              "decode a 16-byte descriptor once a channel holds it")
            .assumed("x0.5..x2", "5 ns, fits the 141 ns probe"),
        count("completion_cycles", &C::completion_cycles, nullptr, 0, 1000000,
              "last byte written to SBUF -> completion ring / semaphore updated")
            .assumed("x0.5..x2", "10 ns, fits the 141 ns probe"),
        count("engines", &C::engines, "16", 1, 256, "DMA engines per core (Neuron arch guide: 16)")
            .documented("NKI DMA overview: each NeuronCore (v2-v4) is paired with 16 DMA engines"),
        bandwidth("engine_bandwidth", &C::engine_bandwidth, nullptr,
                  "theoretical data rate of one DMA engine (27.2 GB/s on NeuronCore-v2 and -v3)")
            .documented("NKI DMA overview, Basic DMA Capabilities: 'theoretical bandwidth of 27.2 GB/s for "
                        "NeuronCore-v2 and -v3' (the NKI Trainium/Inferentia2 guide rounds it to 27 GiB/s)"),
        count("partitions_per_engine", &C::partitions_per_engine, "8", 1, 1024,
              "SBUF partitions one DMA engine serves: a PE DMA instruction's rows go to the engine of their "
              "partition (128 partitions / 16 engines)")
            .documented("NKI DMA overview, Performance Considerations: 'each DMA engine is typically responsible "
                        "for moving data for eight SBUF partitions (128 partitions / 16 DMA engines)'; Example 1: "
                        "A[4,4096] uses one engine"),
        duration("packet_overhead", &C::packet_overhead, "0 ns",
                 "engine time per packet of a PE DMA instruction besides its bytes (a packet: a contiguous piece "
                 "of one HBM run within one SBUF partition, at most burst_size): descriptor set-up, "
                 "synchronization")
            .calibrated("-25%..+25%",
                        "NKI DMA bandwidth guide, 'Why Payload Size Still Matters' table (and the NKI DMA overview, "
                        "Performance Considerations table): with >= 4 KiB per partition one engine sustains 17 B/ns "
                        "(Trainium1) / 23 B/ns (Trainium2); 'the fundamental problem is per-packet overhead'. From the "
                        "theoretical 27.2 GB/s and 2 KiB packets: 2048/17 - 2048/27.2 = 45.18 ns (trn1), 2048/23 - "
                        "2048/27.2 = 13.75 ns (trn2)"),
        real("transpose_efficiency", &C::transpose_efficiency, "1", 0.01, 1,
             "fraction of the copy rate an engine keeps on a DMA transpose")
            .documented("NKI Trainium2 architecture guide, DMA Transpose, Performance Consideration: up to 90 % "
                        "DMA throughput utilization HBM->SBUF (SBUF->SBUF: 50 %); NeuronCore-v2 has no hardware DMA "
                        "transpose (no figure: trn1's 0.25 is assumed)"),
        choice("channel_release", &C::channel_release,
               {{"on_accept", ChannelRelease::OnAccept}, {"on_response", ChannelRelease::OnResponse}},
               "on_accept", "free a channel when the next hop accepts (END_REQ) or hold it for the round trip")
            .assumed("", "END_REQ release reproduces the b2b pipelining oracle"),
        duration("start_latency", &C::start_latency, "0 ns",
                 "per DMA instruction from the PE: semaphore wait + descriptor generation + queue start")
            .documented("NKI DMA bandwidth guide ('~1300 ns cross-engine' semaphore-to-start, trn1); NKI "
                        "Trainium2 arch guide, DGE: 'about 600 ns' per DGE-based DMA instruction (trn2)"),
    };
    return f;
}

} // namespace nctlm
