// The GEMM workload generator: turns a GemmWorkload into the PE's instruction stream.
// Per tile i (slot s = i mod buffers): DMA-in A -> Fetch A,B -> matmuls into PSUM -> Copy PSUM->SBUF
// -> DMA-out C. Buffer reuse is explicit: DMA-in of tile i waits for the fetch of tile i-buffers,
// a tile's matmuls wait for the PSUM slot's previous copy, the copy waits for the slot's write-back.
#pragma once

#include "models/pe/gemm_workload.h"
#include "models/pe/instruction.h"
#include "models/pe/pe_config.h"

namespace nctlm {

struct GemmAddresses {
    uint64_t a = 0; // HBM: A of tile i at a + i x a_bytes
    uint64_t b = 0; // HBM: B (once if resident, else per tile at b + i x b_bytes)
    uint64_t c = 0; // HBM: C of tile i at c + i x c_bytes
    // Whole-GEMM tiling (gemm_partition.h): tile i = (row block i / col_blocks, column block
    // i mod col_blocks) reads A's row block at a + (i / col_blocks) x a_bytes and B's column block
    // at b + (i mod col_blocks) x b_bytes; 0: every tile has its own A and B.
    uint32_t col_blocks = 0;
};

// Semaphore numbering of the GEMM program.
struct GemmSemaphores {
    static constexpr uint32_t fetch = 0, gemm = 1, evacuate = 2;
    static uint32_t dma_in(uint32_t slot) { return 3 + slot; }
    static uint32_t dma_out(uint32_t buffers, uint32_t slot) { return 3 + buffers + slot; }
    static uint32_t count(uint32_t buffers) { return 3 + 2 * buffers; }
};

// The main pipeline (throws std::invalid_argument if w.check(pe) fails).
Program make_gemm_program(const GemmWorkload& w, const PeConfig& pe, const GemmAddresses& a);
// The same instructions generated tile by tile as the PE's units reach them (Program::source):
// memory independent of w.tiles.
Program make_gemm_stream(const GemmWorkload& w, const PeConfig& pe, const GemmAddresses& a);
// The weight preload run before it when w.weights_resident (one DMA read of B).
Program make_weight_preload(const GemmWorkload& w, const GemmAddresses& a);

} // namespace nctlm
