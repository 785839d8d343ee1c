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

// "auto": the algorithm with the smaller step cost (docs/models.md): a step costs two DMA start
// latencies plus the bytes a rank moves in it (three transfers of its chunk) at one core's DMA
// bandwidth; ring: 2 (n - 1) steps of a 1/n chunk, tree: 2 log2 n steps of the whole tensor (power-of-two
// groups only). `bytes` per rank, latency in ns, bandwidth in bytes per ns.
std::string choose_algorithm(const CollectiveSpec& s, uint64_t bytes, double latency_ns, double bytes_per_ns);

// Steps each rank takes (between barriers), for reports.
uint32_t collective_steps(const CollectiveSpec& s);

} // namespace nctlm::graph
