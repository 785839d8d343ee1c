// Collectives over the NeuronCores of one chip as kernel programs (docs/models.md, "Collectives"):
// one instance per rank of the group (grid = ranks), each rank's tensors in its own HBM, every
// transfer a DMA that pulls a peer's data over the NoC into SBUF (DMA moves HBM <-> SBUF only),
// adds it on the vector engine where the collective reduces, and stores it into the rank's own
// tensor. Steps are separated by grid barriers (every rank has finished writing what the next step
// reads). Ring: reduce-scatter then all-gather, N - 1 steps each, one chunk (1/N of the data) per
// step. Tree (power-of-two groups): log2 N reduce levels then log2 N broadcast levels of the whole
// tensor (all_reduce), or recursive doubling (all_gather). Each step's data moves in tiles of at
// most 128 partitions x kMaxFree elements. Pure C++: the programs are JSON for the kernel loader.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace nctlm::graph {

enum class Collective { AllReduce, AllGather, ReduceScatter, SendRecv };
const char* collective_name(Collective c);

struct CollectiveSpec {
    Collective kind = Collective::AllReduce;
    std::string algorithm = "ring";  // ring | tree
    uint32_t ranks = 2;
    std::string dtype = "bf16";
    uint32_t elem_bytes = 2;
    // The gathered/scattered tensor as [outer, ranks x inner] (the rank's shard: [outer, inner]);
    // all_reduce and send_recv: outer = 1, inner = all elements / ranks (all elements for send_recv).
    uint64_t outer = 1, inner = 1;
    std::vector<std::pair<uint32_t, uint32_t>> pairs;  // send_recv: [src, dst]
    uint64_t max_free = 0;                             // elements per partition per tile (0: kMaxFree)
};

inline constexpr uint64_t kMaxFree = 2048;

// The kernel program (format version 1) for one collective; tensors: "x" (input), "y" (output)
// and, for reduce_scatter, "partial" (scratch): all per instance. Throws GraphError for a spec the
// algorithm cannot run (tree over a group that is not a power of two, chunks of unequal size).
nlohmann::json collective_program(const CollectiveSpec& s);

// Bytes of one rank's data that give the bus bandwidth (nccom-test's definitions): the whole
// tensor for all_reduce/all_gather/reduce_scatter (the gathered size), and the factor busbw / algbw:
// 2 (n - 1) / n for all_reduce, (n - 1) / n for all_gather and reduce_scatter, 1 for send_recv.
double bus_factor(Collective c, uint32_t ranks);

// What the "auto" rule weighs (docs/models.md, "Choosing the algorithm"): every DMA's start
// latency and one core's DMA bandwidth, and per ordered pair of ranks the path a pull takes from
// one rank's memory to the other's. A pull between chips pays the route's round trip (the request
// out, the data back: 2 x hops x link latency) and shares the wire of every cable its data crosses
// with the step's other pulls that cross it the same way.
struct CollectivePath {
    double latency_ns = 0;             // beyond the on-chip path
    double bytes_per_ns = 0;           // the narrowest wire on the way (0: none, the DMA is the limit)
    std::vector<uint64_t> wires;       // the directed wires the data crosses (any ids, equal = shared)
};
struct CollectiveCosts {
    double dma_latency_ns = 0, dma_bytes_per_ns = 1;
    std::vector<std::vector<CollectivePath>> path;  // path[dst][src]: dst pulls src's data; empty: all on one chip
};

// The rule's estimate (ns) of `algorithm` ("ring" | "tree") for `bytes` per rank (the whole tensor,
// as collective_program's spec has it): the sum over the algorithm's steps of the slowest pull of
// the step, a pull of m bytes costing 2 DMA start latencies + the path's latency + max(m at the
// DMA bandwidth, m x (pulls sharing its busiest wire) at the wire's bandwidth) + the rest of the
// pull's transfers (its own part read, for a reduction, and the store) at the DMA bandwidth.
double collective_cost(const CollectiveSpec& s, const std::string& algorithm, uint64_t bytes, const CollectiveCosts& c);

// "auto": the algorithm with the smaller collective_cost (ring where the tree cannot run: a group
// that is not a power of two, reduce_scatter, send_recv).
std::string choose_algorithm(const CollectiveSpec& s, uint64_t bytes, const CollectiveCosts& c);

// Steps each rank takes (between barriers), for reports.
uint32_t collective_steps(const CollectiveSpec& s);

} // namespace nctlm::graph
