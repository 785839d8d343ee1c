// The PE of a NeuronCore tile. For now a stub initiator: traffic generators post DMA descriptors
// through it, as the sequencer will once it runs instruction streams.
#pragma once

#include "models/dma/dma_engine.h"

#include <systemc>

namespace nctlm {

class ProcessingElement : public sc_core::sc_module {
public:
    ProcessingElement(sc_core::sc_module_name name, DmaEngine& dma) : sc_module(name), dma_(dma) {}
    // Posts a descriptor on the tile's DMA engine at the current simulated time.
    void post_dma(DmaDescriptor& d) { dma_.post(d); }
    DmaEngine& dma() { return dma_; }

private:
    DmaEngine& dma_;
};

} // namespace nctlm
