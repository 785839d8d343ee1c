#include "models/analytic/gemm_model.h"

#include <algorithm>

namespace nctlm::analytic {

double pe_dma_ns(double bytes, bool write, const PeConfig& pe, const DmaConfig& dma, const MemoryPath& path) {
    double chunk = double(pe.dma_descriptor_bytes), ns_per_byte = 1 / DmaCostRules::from(dma).peak_rate();
    double done = bytes * ns_per_byte, posted = 0;
    for (double left = bytes; left > 0; left -= chunk) {
        double size = std::min(chunk, left);
        done = std::max(done, posted + (write ? path.write_ns(size) : path.read_ns(size)));
        posted += size * ns_per_byte;
    }
    return done + path.refresh_delay_ns(done);
}

GemmStageTimes gemm_stage_times(const GemmWorkload& w, const PeConfig& pe, const DmaConfig& dma,
                                const MemoryPath& path) {
    GemmStageTimes t;
    t.dma_start = dma.start_latency.ns;
    // Streamed B travels as a second instruction paced right behind A.
    t.dma_in = pe_dma_ns(double(w.in_bytes()), false, pe, dma, path);
    uint32_t parts = w.fetch_partitions();
    t.fetch = pe.sbuf_latency.ns + pe.sbuf_transfer(double(w.fetch_bytes()), parts).ns;
    uint32_t mb = GemmWorkload::blocks(w.m, w.tile_m), kb = GemmWorkload::blocks(w.k, w.tile_k),
             nb = GemmWorkload::blocks(w.n, w.tile_n);
    for (uint32_t i = 0; i < mb; ++i)
        for (uint32_t j = 0; j < nb; ++j) {
            uint32_t ms = GemmWorkload::block_size(w.m, w.tile_m, i),
                     ns = GemmWorkload::block_size(w.n, w.tile_n, j);
            double acc = double(ms) * ns * 4; // fp32 accumulators
            double matmul = std::max(pe.matmul_time(ms, ns, w.dtype).ns,
                                     pe.psum_latency.ns + pe.psum_transfer(acc, ms).ns);
            t.gemm += kb * matmul;
            double copy = std::max(
                {pe.vector_op_time(ns).ns, pe.psum_latency.ns + pe.psum_transfer(acc, ms).ns,
                 pe.sbuf_latency.ns + pe.sbuf_transfer(double(ms) * ns * dtype_bytes(w.dtype), ms).ns});
            t.evacuate += copy;
        }
    t.write_back = pe_dma_ns(double(w.c_bytes()), true, pe, dma, path);
    t.dma_occupancy = double(w.in_bytes() + w.c_bytes()) / DmaCostRules::from(dma).peak_rate();
    return t;
}

Pipeline gemm_pipeline(const GemmWorkload& w, const PeConfig& pe, const DmaConfig& dma,
                       const MemoryPath& path) {
    GemmStageTimes t = gemm_stage_times(w, pe, dma, path);
    Pipeline p;
    p.fill_ns = pe.pipeline_fill.ns;
    p.tail_ns = pe.pipeline_tail.ns;
    // Steps: 0 load start, 1 dma_in, 2 fetch, 3 gemm, 4 evacuate, 5 store start, 6 write_back.
    p.steps = {{"dma_start_in", t.dma_start, 0, false},
               {"dma_in", t.dma_in, 0, true}, // its resource (the DMA issue) is shared: see below
               {"fetch", t.fetch, t.fetch, true},
               {"gemm", t.gemm, t.gemm, true},
               {"evacuate", t.evacuate, t.evacuate, true},
               {"dma_start_out", t.dma_start, 0, false},
               {"write_back", t.write_back, 0, true}};
    p.shared = {{"dma", t.dma_occupancy}};
    p.rings = {{"sbuf_in", 0, 2, w.buffers},
               {"staging", 2, 3, pe.operand_buffers},
               {"psum", 3, 4, w.buffers},
               {"sbuf_out", 4, 6, w.buffers}};
    return p;
}

} // namespace nctlm::analytic
