#include "models/host/transfer_schedule.h"

#include <algorithm>

namespace nctlm {

TransferTimes schedule_h2d(double issue_ns, uint64_t bytes, bool host_pinned, const TransferParams& p,
                           BandwidthPipe& link) {
    TransferTimes t;
    t.issue_ns = issue_ns;
    double host = issue_ns + p.latency.ns; // the host thread's clock
    t.link_start_ns = t.link_end_ns = host;
    bool first = true;
    for (uint64_t sent = 0; sent < bytes; sent += p.max_payload) {
        double chunk = double(std::min<uint64_t>(p.max_payload, bytes - sent));
        double ready = host;
        if (!host_pinned) {
            double copy = p.memcpy.transfer(chunk).ns;
            host += copy;
            t.memcpy_ns += copy;
            ready = host;
        }
        Occupancy o = link.reserve(ready, chunk);
        if (first)
            t.link_start_ns = o.start_ns;
        first = false;
        t.link_end_ns = o.end_ns;
        ++t.chunks;
    }
    t.host_free_ns = host;
    t.done_ns = std::max(host, t.link_end_ns);
    return t;
}

TransferTimes schedule_d2h(double issue_ns, uint64_t bytes, bool host_pinned, const TransferParams& p,
                           BandwidthPipe& link) {
    TransferTimes t;
    t.issue_ns = issue_ns;
    double ready = issue_ns + p.latency.ns, host = ready;
    t.link_start_ns = t.link_end_ns = ready;
    bool first = true;
    for (uint64_t sent = 0; sent < bytes; sent += p.max_payload) {
        double chunk = double(std::min<uint64_t>(p.max_payload, bytes - sent));
        Occupancy o = link.reserve(ready, chunk);
        if (first)
            t.link_start_ns = o.start_ns;
        first = false;
        t.link_end_ns = o.end_ns;
        if (!host_pinned) {
            // Copy the chunk out of the bounce buffer once it has landed and the CPU is free.
            double copy = p.memcpy.transfer(chunk).ns;
            host = std::max(host, o.end_ns) + copy;
            t.memcpy_ns += copy;
        }
        ++t.chunks;
    }
    t.done_ns = std::max(host, t.link_end_ns);
    t.host_free_ns = t.done_ns;
    return t;
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
