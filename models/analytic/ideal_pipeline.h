// An ideal pipeline in closed form: every tile passes the same chain of steps; a step has a latency
// (its time per tile) and may occupy a resource for part of it. Throughput is limited by the busiest
// resource and by every buffer ring (a ring of B buffers spanning steps a..b lets at most B tiles be
// inside a..b at once, so a tile leaves it every (sum of their latencies) / B at best).
//   start(i) = max(start(i-1) + max(occupancies, shared resources), start(i-B) + ring loop) per ring
//   wall     = fill + start(tiles-1) + (latency of one tile through all steps) + tail
//   (steady-state period = max(occupancies, shared resources, ring loop / B))
//   efficiency = tiles x bottleneck stage time / wall
// Pure C++, no SystemC.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nctlm::analytic {

struct Step {
    std::string name;
    double latency_ns = 0;   // time one tile spends in the step
    double occupancy_ns = 0; // time the step's own resource is busy per tile (0: a pure latency)
    bool stage = true;       // counts as a pipeline stage for the bottleneck (false: a latency)
};

struct BufferRing {
    std::string name;
    size_t first = 0, last = 0; // steps [first, last] hold one buffer per tile
    uint32_t buffers = 1;
};

struct SharedResource {
    std::string name;
    double ns_per_tile = 0; // several steps' occupancy of one resource (e.g. loads + stores on DMA)
};

struct Pipeline {
    std::vector<Step> steps;
    std::vector<BufferRing> rings;
    std::vector<SharedResource> shared;
    double fill_ns = 0, tail_ns = 0;
};

struct PipelineResult {
    double latency_ns = 0;    // one tile, first step start to last step end
    double period_ns = 0;     // steady-state time between tiles
    std::string limiter;      // what sets the period
    double bottleneck_ns = 0; // the longest stage time
    std::string bottleneck;
    double wall_ns = 0;
    double efficiency = 0; // fraction 0..1
};

PipelineResult evaluate(const Pipeline& p, uint64_t tiles);

} // namespace nctlm::analytic
