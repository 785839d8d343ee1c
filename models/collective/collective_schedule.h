// Collectives as schedules of transfers between ranks (pure C++, no kernel): all_reduce,
// all_gather and reduce_scatter by the ring and tree algorithms, each step's chunk cut into
// slices that pipeline across ranks. A transfer runs on one rank: it reads `bytes` of its own
// memory (two regions for a reduction, added element by element), and writes the result to one or
// two destinations (its own memory or another rank's); it may start once the transfers listed in
// `after` have landed their data in its memory. docs/models/collective.md has the steps.
//
// Sizes follow nccom-test's size(B): all_reduce: the buffer every rank holds (in and out);
// all_gather: the gathered output (each rank contributes size / ranks); reduce_scatter: the input
// (each rank keeps size / ranks). Chunks are size / ranks and must be whole elements.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nctlm::collective {

enum class Operation { AllReduce, AllGather, ReduceScatter };
enum class Algorithm { Ring, Tree };
const char* op_name(Operation op);
const char* algorithm_name(Algorithm a);
std::optional<Operation> parse_op(const std::string& word);               // all_reduce | allr | ...
std::optional<Algorithm> parse_algorithm(const std::string& word);  // ring | tree

struct Spec {
    Operation op = Operation::AllReduce;
    Algorithm algorithm = Algorithm::Ring;
    uint32_t ranks = 2;
    uint64_t bytes = 0;       // nccom-test's size(B)
    uint32_t elem_bytes = 4;  // the element a reduction adds
    uint32_t slices = 2;      // pipeline depth: a step's data is cut into this many slices
};

// A rank's memory for the collective, each region at an offset in one of three buffers.
enum class Buffer { Input, Output, Scratch };
const char* buffer_name(Buffer b);
struct Region {
    Buffer buffer = Buffer::Input;
    uint64_t offset = 0;
};

struct Transfer {
    uint32_t rank = 0;             // runs on this rank's engines
    Region src;                    // read from the rank's own memory
    std::optional<Region> add;     // reduction: src + add
    struct Dest {
        uint32_t rank;
        Region at;
    };
    std::vector<Dest> dests;       // 1 or 2 (a write duplicated to the rank's own memory and the next)
    uint64_t bytes = 0;
    std::vector<uint32_t> after;   // transfers whose writes into this rank's memory it reads
    uint32_t round = 0;            // pipeline position: every transfer in `after` has a smaller one
    uint32_t step = 0;             // the algorithm's step (ring: 0 .. 2(n-1)-1; tree: up then down)
    uint32_t slice = 0;
    bool remote() const;           // writes to another rank
};

struct Schedule {
    Spec spec;
    uint64_t input_bytes = 0, output_bytes = 0, scratch_bytes = 0;  // per rank
    uint64_t chunk_bytes = 0;                                         // size / ranks
    uint32_t steps = 0;                                               // the algorithm's steps
    std::vector<Transfer> transfers;
    std::vector<std::vector<uint32_t>> by_rank;  // each rank's transfers in the order it runs them
};

// nccom-test's bus bandwidth factor: busbw = algbw x factor (all_reduce 2(n-1)/n, all_gather and
// reduce_scatter (n-1)/n; NCCOM-TEST User Guide, "Bus Bandwidth Calculation").
double bus_factor(Operation op, uint32_t ranks);

// Throws std::invalid_argument naming the problem (ranks < 2, size not a whole number of elements
// per rank, slices = 0).
Schedule make_schedule(const Spec& spec);

// The binary tree the tree algorithm uses: rank r's parent is (r - 1) / 2 (rank 0 is the root).
inline int tree_parent(uint32_t r) { return r == 0 ? -1 : int((r - 1) / 2); }

} // namespace nctlm::collective
