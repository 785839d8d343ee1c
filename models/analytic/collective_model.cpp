#include "models/analytic/collective_model.h"

namespace nctlm::analytic {

RingClosedForm ring_closed_form(collective::Operation op, uint32_t n, uint64_t bytes, double link_bandwidth,
                                double step_latency_ns) {
    RingClosedForm f;
    f.steps = op == collective::Operation::AllReduce ? 2 * (n - 1) : n - 1;
    f.chunk_bytes = double(bytes) / n;
    f.bytes_per_link = f.steps * f.chunk_bytes;
    f.time_ns = f.steps * (step_latency_ns + f.chunk_bytes / link_bandwidth * 1e9);
    f.busbw = f.time_ns > 0 ? double(bytes) / (f.time_ns * 1e-9) * collective::bus_factor(op, n) : 0;
    return f;
}

namespace {
uint32_t subtree_size(uint32_t r, uint32_t n) {
    if (r >= n)
        return 0;
    return 1 + subtree_size(2 * r + 1, n) + subtree_size(2 * r + 2, n);
}
uint32_t depth(uint32_t r) {
    uint32_t d = 0;
    for (r = r + 1; r > 1; r /= 2)
        ++d;
    return d;
}
} // namespace

std::vector<TreeEdge> tree_edge_bytes(collective::Operation op, uint32_t n, uint64_t bytes) {
    const double S = double(bytes), C = S / n;
    std::vector<TreeEdge> edges;
    for (uint32_t c = 1; c < n; ++c) {
        const double below = subtree_size(c, n) * C;
        TreeEdge e{c, 0, 0};
        switch (op) {
        case collective::Operation::AllReduce: e.up_bytes = S, e.down_bytes = S; break;  // a partial up, the sum down
        case collective::Operation::AllGather: e.up_bytes = below, e.down_bytes = S - below; break;
        case collective::Operation::ReduceScatter: e.up_bytes = S, e.down_bytes = below; break;
        }
        edges.push_back(e);
    }
    return edges;
}

uint32_t tree_steps(uint32_t n) { return 2 * depth(n - 1) + 1; }

} // namespace nctlm::analytic
