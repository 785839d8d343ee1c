// One NeuronCore tile: the PE and its DMA engine. The DMA socket binds to the NoC.
#pragma once

#include "models/dma/dma_engine.h"
#include "models/pe/processing_element.h"

#include <systemc>

namespace nctlm {

class NeuronCore : public sc_core::sc_module {
public:
    NeuronCore(sc_core::sc_module_name name, const DmaConfig& dma_cfg, const PeConfig& pe_cfg, uint32_t tile_id)
        : sc_module(name), id(tile_id), dma("dma", dma_cfg, tile_id), pe("pe", dma, pe_cfg) {}
    const uint32_t id;
    DmaEngine dma;
    ProcessingElement pe;
};

} // namespace nctlm
