#include "models/analytic/memory_path.h"

#include "models/hbm/pc_scheduler.h"

#include <algorithm>
#include <cmath>

namespace nctlm::analytic {

MemoryPath::MemoryPath(const DmaConfig& dma, const NocConfig& noc, const HbmConfig& hbm)
    : descriptor_ns(dma.clock.cycles(dma.descriptor_cycles).ns),
      completion_ns(dma.clock.cycles(dma.completion_cycles).ns), hop_ns(noc.hop_latency().ns),
      request_flit_ns(noc.link_bandwidth.transfer(double(noc.request_bytes)).ns),
      controller_ns(hbm.controller_latency.ns), pc_ns_per_byte(1e9 / hbm.pc_bandwidth.bytes_per_s),
      engine_ns_per_byte(1e9 / dma.data_bandwidth().bytes_per_s), burst_bytes(double(dma.burst_size)),
      interleave_bytes(double(hbm.interleave)), pcs(hbm.pseudo_channels) {
    if (hbm.model == HbmModel::Banked) {
        // A row miss on a precharged bank: front end + tRCD + CL (whole DRAM cycles).
        DramTiming t = DramTiming::from(hbm);
        controller_ns = t.front_end + t.rcd + t.cl;
        if (hbm.refresh == RefreshMode::AllBank) {
            refresh_rfc_ns = t.rfc;
            refresh_refi_ns = t.refi;
        }
    }
}

double MemoryPath::per_pc_bytes(double bytes) const {
    // Interleave-aligned: consecutive interleave chunks go to consecutive PCs.
    double chunks = std::ceil(bytes / interleave_bytes);
    double rounds = std::ceil(chunks / pcs);
    return std::min(bytes, rounds * interleave_bytes);
}

double MemoryPath::read_ns(double bytes) const {
    double bursts = std::ceil(bytes / burst_bytes);
    double head = descriptor_ns + (bursts - 1) * request_flit_ns + hops * hop_ns + controller_ns;
    double tail = head + per_pc_bytes(bytes) * pc_ns_per_byte + hops * hop_ns;
    double engines = head + hops * hop_ns + bytes * engine_ns_per_byte; // the engines write it into SBUF
    return std::max(tail, engines) + completion_ns;
}

double MemoryPath::refresh_delay_ns(double busy_ns) const {
    // An all-bank refresh blocks every PC for tRFC each tREFI. Work spanning busy_ns overlaps one
    // with probability (busy + tRFC) / tREFI and then waits tRFC / 2 on average.
    if (refresh_refi_ns <= 0)
        return 0;
    return std::min(1.0, (busy_ns + refresh_rfc_ns) / refresh_refi_ns) * refresh_rfc_ns / 2;
}

double MemoryPath::write_ns(double bytes) const {
    double out = descriptor_ns + std::min(bytes, burst_bytes) * engine_ns_per_byte; // first burst leaves
    double issue = descriptor_ns + bytes * engine_ns_per_byte;                      // last burst leaves
    double at_pc =
        std::max(out + hops * hop_ns + controller_ns + per_pc_bytes(bytes) * pc_ns_per_byte,
                 issue + hops * hop_ns + controller_ns + std::min(bytes, burst_bytes) * pc_ns_per_byte);
    return at_pc + hops * hop_ns + completion_ns;
}

} // namespace nctlm::analytic
