#include "models/dma/dma_cost.h"

#include "models/dma/dma_config.h"

#include <algorithm>

namespace nctlm {

DmaCostRules DmaCostRules::from(const DmaConfig& c) {
    DmaCostRules r;
    r.ns_per_byte = 1e9 / c.engine_bandwidth.bytes_per_s;
    r.packet_overhead_ns = c.packet_overhead.ns;
    r.transpose_efficiency = c.transpose_efficiency;
    r.packet_bytes = std::max<uint64_t>(1, c.burst_size);
    r.engines = std::max(1u, c.engines);
    r.partitions_per_engine = std::max(1u, c.partitions_per_engine);
    return r;
}

namespace {
uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

// Packet starts in [0, n) of a byte stream cut into runs of `run` bytes, each cut into pieces of
// at most `burst` (a run starts a packet).
uint64_t run_cuts_below(uint64_t n, uint64_t run, uint64_t burst) {
    return n / run * ceil_div(run, burst) + ceil_div(n % run, burst);
}
} // namespace

std::vector<DmaEngineLoad> DmaCostRules::engine_loads(const DmaTransferShape& s) const {
    std::vector<DmaEngineLoad> loads(engines);
    if (s.bytes == 0)
        return loads;
    const uint64_t run = std::clamp<uint64_t>(s.run_bytes ? s.run_bytes : s.bytes, 1, s.bytes);
    // No partition structure, or a DMA transpose (all engines write each [128, 16] SBUF tile
    // together: NKI Trainium2 arch guide): the HBM runs' packets round robin over the engines.
    if (s.partitions == 0 || s.transpose) {
        uint64_t packets = run_cuts_below(s.bytes, run, packet_bytes);
        uint64_t before = 0;  // packets of the engines before e
        for (uint32_t e = 0; e < engines; ++e) {
            uint64_t mine = packets / engines + (e < packets % engines ? 1 : 0);
            // Bytes in proportion to packets, split so the shares add up to the transfer.
            auto share = [&](uint64_t k) { return uint64_t((unsigned __int128)s.bytes * k / packets); };
            loads[e] = {mine, share(before + mine) - share(before)};
            before += mine;
        }
        return loads;
    }
    // Equal rows per partition (the last one short when the bytes do not divide).
    const uint64_t row = ceil_div(s.bytes, s.partitions);
    for (uint32_t i = 0; i < s.partitions;) {
        // The partitions [i, j) of the transfer that one engine serves.
        uint32_t q = s.first_partition + i;
        uint32_t group_end = (q / partitions_per_engine + 1) * partitions_per_engine;
        uint32_t j = std::min(s.partitions, i + (group_end - q));
        uint64_t a = std::min(s.bytes, uint64_t(i) * row), b = std::min(s.bytes, uint64_t(j) * row);
        if (b > a) {
            DmaEngineLoad& l = loads[(q / partitions_per_engine) % engines];
            // A packet starts at a and at every run/burst cut inside: rows of consecutive partitions
            // that are contiguous in HBM share packets (DMA overview, Example 2: one 2 KiB read per
            // engine for its eight 256 B rows).
            l.packets += 1 + run_cuts_below(b, run, packet_bytes) - run_cuts_below(a + 1, run, packet_bytes);
            l.bytes += b - a;
        }
        i = j;
    }
    return loads;
}

double DmaCostRules::busiest_engine_ns(const DmaTransferShape& s) const {
    double busiest = 0;
    for (const DmaEngineLoad& l : engine_loads(s))
        busiest = std::max(busiest, engine_ns(l, s.transpose));
    return busiest;
}

double DmaCostRules::engine_rate(uint64_t partition_bytes) const {
    DmaTransferShape s;
    s.partitions = partitions_per_engine;
    s.bytes = partition_bytes * partitions_per_engine;
    s.run_bytes = partition_bytes;
    double ns = busiest_engine_ns(s);
    return ns > 0 ? double(s.bytes) / ns : 0;
}

} // namespace nctlm
