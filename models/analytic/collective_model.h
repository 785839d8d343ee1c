// Closed forms of the collective algorithms (models/collective), an independent cross-check of the
// simulated schedules and figures: how many steps, how many bytes each rank sends and each link
// carries, and a time of `steps x (latency + chunk / bandwidth)` for a ring whose consecutive
// ranks are joined by links of one bandwidth. Pure C++.
#pragma once

#include "models/collective/collective_schedule.h"

#include <cstdint>
#include <vector>

namespace nctlm::analytic {

struct RingClosedForm {
    uint32_t steps = 0;          // all_reduce 2(n-1), all_gather and reduce_scatter n-1
    double chunk_bytes = 0;      // size / n
    double bytes_per_link = 0;   // each ring link (rank r to r + 1), one direction: steps x chunk
    double time_ns = 0;          // steps x (step_latency + chunk / bandwidth)
    double busbw = 0;            // B/s, nccom-test's definition from time_ns
};
// `link_bandwidth`: B/s one way between consecutive ranks; `step_latency_ns`: what a step costs
// besides moving its chunk.
RingClosedForm ring_closed_form(collective::Operation op, uint32_t ranks, uint64_t bytes, double link_bandwidth,
                                double step_latency_ns);

// The binary tree (rank r's parent (r-1)/2): bytes one way over the edge from each child to its
// parent (up) and back (down), for edge c (child rank c, c = 1 .. n-1).
struct TreeEdge {
    uint32_t child = 0;
    double up_bytes = 0, down_bytes = 0;
};
std::vector<TreeEdge> tree_edge_bytes(collective::Operation op, uint32_t ranks, uint64_t bytes);
// Pipeline steps of the tree schedule: up from the deepest rank to the root and down again.
uint32_t tree_steps(uint32_t ranks);

} // namespace nctlm::analytic
