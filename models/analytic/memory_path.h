// Closed-form latency of one DMA descriptor between a tile and its local HBM stack, from the same
// parameters the DMA/NoC/HBM models use (the 141 ns probe is this formula for a 32 KiB read):
//   read  = descriptor + (bursts-1) request flits + hops + controller + bytes per PC / PC rate
//           + hops back + completion
//   write = descriptor + data into the engines + hops + controller + bytes per PC / PC rate
//           + hops back (acknowledge) + completion
#pragma once

#include "models/dma/dma_config.h"
#include "models/hbm/hbm_config.h"
#include "models/noc/noc_config.h"

namespace nctlm::analytic {

struct MemoryPath {
    MemoryPath(const DmaConfig& dma, const NocConfig& noc, const HbmConfig& hbm);
    double read_ns(double bytes) const;
    double write_ns(double bytes) const;

    // Expected delay from HBM refresh for work that keeps the memory busy for busy_ns (0 without).
    double refresh_delay_ns(double busy_ns) const;
    double descriptor_ns, completion_ns, hop_ns, request_flit_ns, controller_ns;
    double refresh_rfc_ns = 0, refresh_refi_ns = 0;
    double pc_ns_per_byte, engine_ns_per_byte, burst_bytes, interleave_bytes;
    uint32_t pcs, hops = 2; // local stack: tile -> router -> stack

private:
    double per_pc_bytes(double bytes) const;
};

} // namespace nctlm::analytic
