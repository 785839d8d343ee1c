#include "models/host/pcie_link.h"

#include "models/common/sim.h"
#include "models/common/trace.h"

namespace nctlm {

PcieLink::PcieLink(sc_core::sc_module_name name, const HostConfig& cfg, Host& host)
    : sc_module(name), cfg_(cfg), host_(host), h2d_(cfg.pcie_h2d_bandwidth), d2h_(cfg.pcie_d2h_bandwidth),
      h2d_track_(nctlm::trace().track(this->name(), "h2d")),
      d2h_track_(nctlm::trace().track(this->name(), "d2h")) {}

TransferTimes PcieLink::to_device(const HostBuffer& b) {
    TransferParams p{cfg_.pcie_h2d_latency, cfg_.pcie_max_payload, host_.memcpy_bandwidth()};
    TransferTimes t = schedule_h2d(now_ns(), b.bytes, b.pinned, p, h2d_);
    account("h2d", t, b.bytes, h2d_track_);
    return t;
}

TransferTimes PcieLink::to_host(const HostBuffer& b) {
    TransferParams p{cfg_.pcie_d2h_latency, cfg_.pcie_max_payload, host_.memcpy_bandwidth()};
    TransferTimes t = schedule_d2h(now_ns(), b.bytes, b.pinned, p, d2h_);
    account("d2h", t, b.bytes, d2h_track_);
    return t;
}

void PcieLink::account(const char* dir, const TransferTimes& t, uint64_t bytes, int track) {
    std::string base = std::string(name()) + "." + dir;
    stats().counter(base + ".transfers").add(1);
    stats().counter(base + ".bytes", "B").add(double(bytes));
    stats().counter(base + ".chunks").add(t.chunks);
    stats()
        .counter(base + ".link_busy_ns", "ns")
        .add(double(bytes) * 1e9 /
             (dir[0] == 'h' ? cfg_.pcie_h2d_bandwidth.bytes_per_s : cfg_.pcie_d2h_bandwidth.bytes_per_s));
    stats().histogram(base + ".transfer_ns", "ns").add(t.done_ns - t.issue_ns);
    host_.staged(bytes, t.memcpy_ns);
    // One span per transfer: first to last byte on the link (chunks follow back to back).
    if (t.chunks)
        nctlm::trace().span(track, "dma", t.link_start_ns, t.link_end_ns);
}

} // namespace nctlm
