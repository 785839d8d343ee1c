#include "models/analytic/ideal_pipeline.h"

#include <algorithm>
#include <stdexcept>
#include <vector>

namespace nctlm::analytic {

PipelineResult evaluate(const Pipeline& p, uint64_t tiles) {
    if (tiles == 0)
        throw std::invalid_argument("evaluate: zero tiles");
    PipelineResult r;
    for (const Step& s : p.steps) {
        r.latency_ns += s.latency_ns;
        if (s.occupancy_ns > r.period_ns) {
            r.period_ns = s.occupancy_ns;
            r.limiter = s.name;
        }
        if (s.stage && s.latency_ns > r.bottleneck_ns) {
            r.bottleneck_ns = s.latency_ns;
            r.bottleneck = s.name;
        }
    }
    for (const SharedResource& s : p.shared)
        if (s.ns_per_tile > r.period_ns) {
            r.period_ns = s.ns_per_tile;
            r.limiter = s.name;
        }
    // Tile i starts (enters step 0) one period after tile i-1, and no earlier than one ring loop
    // after tile i-buffers started, for every ring: s(i) = max(s(i-1) + P, s(i-B_r) + loop_r).
    std::vector<double> loops;
    for (const BufferRing& ring : p.rings) {
        if (ring.last >= p.steps.size() || ring.first > ring.last || ring.buffers == 0)
            throw std::invalid_argument("evaluate: bad buffer ring " + ring.name);
        double loop = 0;
        for (size_t i = ring.first; i <= ring.last; ++i)
            loop += p.steps[i].latency_ns;
        loops.push_back(loop);
        if (loop / ring.buffers > r.period_ns) { // the steady-state period
            r.period_ns = loop / ring.buffers;
            r.limiter = ring.name;
        }
    }
    double base_period = 0;
    for (const Step& s : p.steps)
        base_period = std::max(base_period, s.occupancy_ns);
    for (const SharedResource& s : p.shared)
        base_period = std::max(base_period, s.ns_per_tile);
    std::vector<double> start(tiles, 0.0);
    for (uint64_t i = 1; i < tiles; ++i) {
        start[i] = start[i - 1] + base_period;
        for (size_t k = 0; k < p.rings.size(); ++k)
            if (i >= p.rings[k].buffers)
                start[i] = std::max(start[i], start[i - p.rings[k].buffers] + loops[k]);
    }
    r.wall_ns = p.fill_ns + start[tiles - 1] + r.latency_ns + p.tail_ns;
    r.efficiency = double(tiles) * r.bottleneck_ns / r.wall_ns;
    return r;
}

} // namespace nctlm::analytic
