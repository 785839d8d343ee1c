// The host <-> device PCIe link: one pipe per direction (full duplex), each with its own
// descriptor DMA rate and per-transfer latency, transfers cut into descriptors, pageable memory
// through the driver's bounce buffer, page-locked memory pinned and DMA'd in place. A copy is scheduled on the
// pipe when issued (first come, first served, like an HBM pseudo-channel's available_at); the
// caller waits on the returned times.
#pragma once

#include "models/common/bandwidth_pipe.h"
#include "models/common/stats.h"
#include "models/host/host.h"
#include "models/host/host_config.h"
#include "models/host/transfer_schedule.h"

#include <systemc>

namespace nctlm {

class PcieLink : public sc_core::sc_module {
public:
    PcieLink(sc_core::sc_module_name name, const HostConfig& cfg, Host& host);
    // Schedules a copy issued now from/to `buffer`; the caller waits until host_free_ns / done_ns.
    TransferTimes to_device(const HostBuffer& buffer);
    TransferTimes to_host(const HostBuffer& buffer);
    const BandwidthPipe& h2d() const { return h2d_; }
    const BandwidthPipe& d2h() const { return d2h_; }

private:
    // One direction's counters, registered once at construction (no lookups per transfer).
    struct Direction {
        Direction(const std::string& base, Bandwidth bw, int track);
        Counter &transfers, &bytes, &chunks, &link_busy_ns;
        Histogram& transfer_ns;
        Bandwidth bandwidth;
        int track;
    };
    void account(Direction& dir, const TransferTimes& t, uint64_t bytes);
    TransferParams params(Duration latency, Bandwidth copy) const;
    HostConfig cfg_;
    Host& host_;
    BandwidthPipe h2d_, d2h_;
    Direction h2d_stats_, d2h_stats_;
};

} // namespace nctlm
