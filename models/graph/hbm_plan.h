// Where every tensor of an op graph lives in HBM (docs/models.md, "HBM placement"): each rank's
// tensors in the stack next to its NeuronCore, weights, KV caches and inputs for the whole run,
// each activation from the op that produces it to its last reader (then its space is reused),
// each kernel call's scratch for that call only. First fit over a free list per stack, every
// tensor aligned to a full interleave round. The graph owns these addresses; kernels are given them
// (KernelLaunch::place_at), so a tensor keeps its place from one kernel to the next. Pure C++.
#pragma once

#include "models/graph/graph_lowering.h"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace nctlm::graph {

inline constexpr uint64_t kUnplaced = std::numeric_limits<uint64_t>::max();

struct HbmTarget {
    std::vector<uint32_t> rank_stack;  // the stack next to each rank's core
    uint32_t stacks = 1;
    uint64_t capacity = 0;             // bytes per stack
    uint64_t align = 1;                // every tensor starts on a multiple
};

struct HbmPlan {
    std::vector<std::vector<uint64_t>> tensor;                     // [tensor][rank]: byte offset in the rank's stack
    std::vector<std::vector<std::vector<std::vector<uint64_t>>>> scratch;  // [lowered op][call][scratch][rank]
    std::vector<uint64_t> persistent, peak;                        // per stack: weights + caches + inputs; the high mark
};

// Throws GraphError naming the tensor (or scratch) and stack that does not fit, with what uses it.
HbmPlan plan_hbm(const Graph& g, const Lowering& l, const HbmTarget& t);

} // namespace nctlm::graph
