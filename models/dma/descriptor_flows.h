// The flow mode's seam in the DMA engine (sim.timing: flow, docs/performance.md): instead of
// cutting a descriptor into bursts, the engine hands each descriptor it takes to a flow model
// (models/flow/FlowNetwork), which moves its bytes as one flow sharing the DMA data path, NoC links
// and HBM pseudo-channels with the others, and calls DmaEngine::flow_done when it is complete.
#pragma once

namespace nctlm {

class DmaEngine;
struct DmaDescriptor;

class DescriptorFlows {
public:
    virtual ~DescriptorFlows() = default;
    // `d`, taken by `engine`, starts issuing its requests at `start_ns` (>= the kernel's time).
    // Returns how long issuing them holds its channel (a channel under on_accept is free then).
    virtual double start(DmaEngine& engine, DmaDescriptor& d, double start_ns) = 0;
};

} // namespace nctlm
