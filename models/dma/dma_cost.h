// The DMA engines' cost of a PE DMA instruction from its transfer shape, pure C++ (no SystemC).
// The DMA block books these costs on its engines (DmaEngine::book_instruction) for every timing
// mode (AT, LT, flow), and the analytic models take their closed forms from here.
//
// Public figures (docs/models/dma.md, configs/public-figures.yaml):
// - 16 engines per NeuronCore, each with a theoretical 27.2 GB/s (NKI DMA overview, Basic DMA
//   Capabilities, NeuronCore-v2 and -v3);
// - a transfer is parallelized over the engines by SBUF partition: "each DMA engine is typically
//   responsible for moving data for eight SBUF partitions" (NKI DMA overview, Performance
//   Considerations; Example 1: 4 partitions use one engine);
// - "the fundamental problem is per-packet overhead": every packet pays a set-up besides its
//   bytes, so >= 4 KiB per partition sustains 17 (trn1) / 23 (trn2) B/ns per engine while small
//   runs are overhead-bound (NKI DMA bandwidth guide).
//
// The model: an instruction's bytes in transfer order are laid over its partitions (equal rows),
// each partition's row moved by its engine; a packet is a contiguous piece of one HBM run (the
// pattern's merged inner dimensions) within one engine's share, at most `dma.burst_size` long
// (runs start burst-aligned): rows contiguous in HBM share packets (DMA overview, Example 2), rows
// that are separate runs (a slice of a wider tensor) pay a packet each at least. Each engine holds each
// of its packets for `dma.packet_overhead` plus bytes at the theoretical rate (divided by
// `dma.transpose_efficiency` for a DMA transpose). The sustained per-engine rate is not a
// parameter: on the guide's reference pattern (128 partitions, >= 4 KiB each, contiguous rows) it
// is burst / (overhead + burst / rate).
#pragma once

#include <cstdint>
#include <vector>

namespace nctlm {

struct DmaConfig;

// The shape of one PE DMA instruction as the engines see it.
struct DmaTransferShape {
    uint64_t bytes = 0;
    uint64_t run_bytes = 0;        // contiguous HBM bytes per run (the whole transfer when contiguous)
    uint32_t partitions = 0;       // SBUF partitions written/read (0: none known, packets round robin)
    uint32_t first_partition = 0;  // SBUF partition of the transfer's first row
    bool transpose = false;        // a DMA transpose (dma.transpose_efficiency)
};

// One engine's share of an instruction.
struct DmaEngineLoad {
    uint64_t packets = 0;
    uint64_t bytes = 0;
};

struct DmaCostRules {
    double ns_per_byte = 0;           // 1 / theoretical rate of one engine
    double packet_overhead_ns = 0;    // engine time per packet besides its bytes
    double transpose_efficiency = 1;  // fraction of the copy rate a transpose keeps
    uint64_t packet_bytes = 1;        // the most one packet moves (dma.burst_size)
    uint32_t engines = 1;
    uint32_t partitions_per_engine = 1;
    static DmaCostRules from(const DmaConfig& c);

    // Per engine (index = engine), its packets and bytes of the transfer.
    std::vector<DmaEngineLoad> engine_loads(const DmaTransferShape& s) const;
    // Engine time of a share: per-packet set-up plus its bytes.
    double engine_ns(const DmaEngineLoad& l, bool transpose = false) const {
        return double(l.packets) * packet_overhead_ns +
               double(l.bytes) * ns_per_byte / (transpose ? transpose_efficiency : 1.0);
    }
    // The busiest engine's time for the transfer (a floor on its time on idle engines).
    double busiest_engine_ns(const DmaTransferShape& s) const;

    // Closed forms (analytic models, tests). Bytes per ns one engine sustains on rows of
    // `partition_bytes`, each row its own HBM run (the guide's reference pattern at that size).
    double engine_rate(uint64_t partition_bytes) const;
    // Bytes per ns all engines sustain on the reference pattern with rows of at least a burst
    // (16 x 17 B/ns = 272 GB/s on trn1: the DMA overview's aggregate).
    double peak_rate() const { return engines * engine_rate(packet_bytes); }
};

} // namespace nctlm
