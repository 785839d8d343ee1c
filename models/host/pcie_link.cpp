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

TransferParams PcieLink::params(Duration latency, Bandwidth copy) const {
    return {latency,        cfg_.pcie_max_payload, cfg_.pcie_descriptor_cost, copy,
            cfg_.page_bytes, cfg_.page_pin_cost,   cfg_.pin_batch_pages};
}

TransferTimes PcieLink::to_device(const HostBuffer& b) {
    // The bounce copy reads the user's tensor: cached or not by its size.
    TransferParams p = params(cfg_.pcie_h2d_latency, host_.tensor_copy_rate(b.bytes));
    TransferTimes t = schedule_h2d(now_ns(), b.bytes, b.pinned, p, h2d_);
    account(h2d_stats_, t, b.bytes);
    return t;
}

TransferTimes PcieLink::to_host(const HostBuffer& b) {
    // The copy out writes the freshly allocated result tensor.
    TransferParams p = params(cfg_.pcie_d2h_latency, host_.fresh_copy_rate());
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
    host_.pinned(t.pin_ns);
    // One span per transfer: first to last byte on the link (chunks follow back to back).
    if (t.chunks) {
        SpanArgs a;
        a.command = "dma";
        a.bytes = bytes;
        nctlm::trace().span(dir.track, "dma", t.link_start_ns, t.link_end_ns, a);
    }
}

} // namespace nctlm
