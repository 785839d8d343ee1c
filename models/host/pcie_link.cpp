#include "models/host/pcie_link.h"

#include "models/common/sim.h"
#include "models/common/trace.h"

namespace nctlm {

PcieLink::PcieLink(sc_core::sc_module_name name, const HostConfig& cfg, Host& host)
    : sc_module(name), cfg_(cfg), host_(host), h2d_(cfg.pcie_h2d_bandwidth), d2h_(cfg.pcie_d2h_bandwidth),
      h2d_stats_(std::string(this->name()) + ".h2d", cfg.pcie_h2d_bandwidth, nctlm::trace().track(this->name(), "h2d")),
      d2h_stats_(std::string(this->name()) + ".d2h", cfg.pcie_d2h_bandwidth, nctlm::trace().track(this->name(), "d2h")) {}

PcieLink::Direction::Direction(const std::string& base, Bandwidth bw, int track_id)
    : transfers(stats().counter(base + ".transfers")), bytes(stats().counter(base + ".bytes", "B")),
      chunks(stats().counter(base + ".chunks")), link_busy_ns(stats().counter(base + ".link_busy_ns", "ns")),
      transfer_ns(stats().histogram(base + ".transfer_ns", "ns")), bandwidth(bw), track(track_id) {}

TransferTimes PcieLink::to_device(const HostBuffer& b) {
    TransferParams p{cfg_.pcie_h2d_latency, cfg_.pcie_max_payload, host_.memcpy_bandwidth()};
    TransferTimes t = schedule_h2d(now_ns(), b.bytes, b.pinned, p, h2d_);
    account(h2d_stats_, t, b.bytes);
    return t;
}

TransferTimes PcieLink::to_host(const HostBuffer& b) {
    TransferParams p{cfg_.pcie_d2h_latency, cfg_.pcie_max_payload, host_.memcpy_bandwidth()};
    TransferTimes t = schedule_d2h(now_ns(), b.bytes, b.pinned, p, d2h_);
    account(d2h_stats_, t, b.bytes);
    return t;
}

void PcieLink::account(Direction& dir, const TransferTimes& t, uint64_t bytes) {
    dir.transfers.add(1);
    dir.bytes.add(double(bytes));
    dir.chunks.add(t.chunks);
    dir.link_busy_ns.add(dir.bandwidth.transfer(double(bytes)).ns);
    dir.transfer_ns.add(t.done_ns - t.issue_ns);
    host_.staged(bytes, t.memcpy_ns);
    // One span per transfer: first to last byte on the link (chunks follow back to back).
    if (t.chunks) {
        SpanArgs a;
        a.command = "dma";
        a.bytes = bytes;
        nctlm::trace().span(dir.track, "dma", t.link_start_ns, t.link_end_ns, a);
    }
}

} // namespace nctlm
