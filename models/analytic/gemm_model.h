// The GEMM tile pipeline as an ideal pipeline: per-tile stage times derived from the platform
// config (the same PeConfig/DmaConfig/NocConfig/HbmConfig the simulation reads) and the workload.
// docs/calibration.md (GEMM) walks through each formula for the reference tile.
#pragma once

#include "models/analytic/ideal_pipeline.h"
#include "models/analytic/memory_path.h"
#include "models/dma/dma_cost.h"
#include "models/pe/gemm_workload.h"
#include "models/pe/pe_config.h"

namespace nctlm::analytic {

struct GemmStageTimes {
    double dma_start = 0;     // dma.start_latency, once per DMA instruction
    double dma_in = 0;        // first descriptor posted -> last data in SBUF
    double fetch = 0;         // SBUF -> tensor engine, both operands
    double gemm = 0;          // all matmuls of the tile
    double evacuate = 0;      // PSUM -> SBUF vector copies
    double write_back = 0;    // first descriptor posted -> C written to HBM
    double dma_occupancy = 0; // DMA engine time per tile (loads + stores at the engines' full-row rate)
};

// One PE DMA instruction of `bytes`: descriptors paced at the engines' full-row rate (DmaCostRules::peak_rate), each then crossing the
// memory path; done when the last descriptor is done.
double pe_dma_ns(double bytes, bool write, const PeConfig& pe, const DmaConfig& dma, const MemoryPath& path);

GemmStageTimes gemm_stage_times(const GemmWorkload& w, const PeConfig& pe, const DmaConfig& dma,
                                const MemoryPath& path);
Pipeline gemm_pipeline(const GemmWorkload& w, const PeConfig& pe, const DmaConfig& dma,
                       const MemoryPath& path);

} // namespace nctlm::analytic
