// Utilization of a platform's resources after a run, and the busiest one: the bound a simulation
// finds (an engine, the DMA issue, a NoC link or an HBM stack). Shared by the testbenches that
// report a bound (gqa, kernel).
#pragma once

#include "platforms/platform.h"

#include <string>
#include <vector>

namespace nctlm {

struct ResourceUse {
    std::string resource;  // "hbm stack 0", "tile 3 dma engines", "noc tile0_to_router", "tile 0 tensor engine"
    double utilization = 0;
};

// The memory system's stats names, taken at build time.
struct MemorySystemNames {
    std::vector<std::string> stacks, dmas, links;
    std::string noc;
    uint32_t pseudo_channels = 0;
    static MemorySystemNames of(Platform& p);
    // Every HBM stack, tile DMA block and NoC link with its utilization over `window_ns` (0: the
    // whole run); with `busiest_pc`, also each stack's busiest pseudo-channel (a hot spot the
    // stack's mean hides).
    void add_use(std::vector<ResourceUse>& out, bool busiest_pc = false, double window_ns = 0) const;
};

// "hbm", "noc", "dma" (a tile's DMA engines), "dma issue" (a PE's descriptor generation) or "engine".
std::string resource_kind(const std::string& resource);
ResourceUse busiest(const std::vector<ResourceUse>& use);

} // namespace nctlm
