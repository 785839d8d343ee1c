#include "models/host/transfer_schedule.h"

#include <algorithm>

namespace nctlm {

namespace {

// One descriptor on the link, ready at `ready_ns`.
Occupancy dma(TransferTimes& t, BandwidthPipe& link, double ready_ns, double bytes) {
    Occupancy o = link.reserve(ready_ns, bytes);
    if (t.chunks == 0)
        t.link_start_ns = o.start_ns;
    t.link_end_ns = o.end_ns;
    ++t.chunks;
    return o;
}

// The driver's bounce-buffer loop (neuron_cdev.c ncdev_mem_buf_copy): per chunk, copy in (to the
// device) or out (from it) and one DMA, each waited for before the next.
TransferTimes bounce(double issue_ns, uint64_t bytes, bool to_device, const TransferParams& p, BandwidthPipe& link) {
    TransferTimes t;
    t.issue_ns = issue_ns;
    double host = issue_ns + p.latency.ns;
    t.link_start_ns = t.link_end_ns = host;
    for (uint64_t sent = 0; sent < bytes; sent += p.max_payload) {
        double chunk = double(std::min<uint64_t>(p.max_payload, bytes - sent));
        double copy = p.copy.transfer(chunk).ns;
        t.memcpy_ns += copy;
        if (to_device)
            host += copy;
        host = dma(t, link, host, chunk).end_ns + p.descriptor_cost.ns;
        if (!to_device)
            host += copy;
    }
    t.host_free_ns = t.done_ns = host;
    return t;
}

// The driver's zero-copy loop (neuron_dma.c ndma_memcpy_zero_copy): pin a batch, issue its
// descriptors, then wait for the previous batch while this one's DMA runs (two contexts).
TransferTimes zero_copy(double issue_ns, uint64_t bytes, const TransferParams& p, BandwidthPipe& link) {
    TransferTimes t;
    t.issue_ns = issue_ns;
    double host = issue_ns + p.latency.ns, previous_end = -1;
    t.link_start_ns = t.link_end_ns = host;
    const uint64_t batch = uint64_t(p.pin_batch_pages) * p.page_bytes;
    for (uint64_t done = 0; done < bytes; done += batch) {
        uint64_t size = std::min(batch, bytes - done);
        double pin = double((size + p.page_bytes - 1) / p.page_bytes) * p.pin_per_page.ns;
        host += pin;
        t.pin_ns += pin;
        double end = host;
        for (uint64_t sent = 0; sent < size; sent += p.max_payload)
            end = dma(t, link, host, double(std::min<uint64_t>(p.max_payload, size - sent))).end_ns;
        if (previous_end >= 0)
            host = std::max(host, previous_end + p.descriptor_cost.ns);
        previous_end = end;
    }
    if (previous_end >= 0)
        host = std::max(host, previous_end + p.descriptor_cost.ns);
    t.host_free_ns = t.done_ns = host;
    return t;
}

} // namespace

TransferTimes schedule_h2d(double issue_ns, uint64_t bytes, bool host_pinned, const TransferParams& p,
                           BandwidthPipe& link) {
    return host_pinned ? zero_copy(issue_ns, bytes, p, link) : bounce(issue_ns, bytes, true, p, link);
}

TransferTimes schedule_d2h(double issue_ns, uint64_t bytes, bool host_pinned, const TransferParams& p,
                           BandwidthPipe& link) {
    return host_pinned ? zero_copy(issue_ns, bytes, p, link) : bounce(issue_ns, bytes, false, p, link);
}

Bandwidth copy_rate(uint64_t working_set, uint64_t llc_bytes, Bandwidth llc, Bandwidth dram) {
    double hit = working_set == 0 ? 1.0 : std::min(1.0, double(llc_bytes) / double(working_set));
    return Bandwidth{1.0 / (hit / llc.bytes_per_s + (1 - hit) / dram.bytes_per_s)};
}

double union_length(std::vector<std::pair<double, double>> v) {
    std::sort(v.begin(), v.end());
    double total = 0, start = 0, end = -1e300;
    for (auto& [s, e] : v) {
        if (s > end) {
            if (end > start)
                total += end - start;
            start = s;
            end = e;
        } else
            end = std::max(end, e);
    }
    if (end > start)
        total += end - start;
    return total;
}

} // namespace nctlm
