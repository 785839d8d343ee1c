#include "testbenches/resource_use.h"

#include "models/common/sim.h"
#include "models/common/stats.h"

#include <algorithm>
#include <fmt/format.h>

namespace nctlm {

MemorySystemNames MemorySystemNames::of(Platform& p) {
    MemorySystemNames n;
    for (auto& h : p.hbm)
        n.stacks.push_back(h->name());
    for (size_t t = 0; t < p.tiles.size(); ++t)
        n.dmas.push_back(p.tiles[t].dma.name());
    n.noc = p.noc.name();
    n.pseudo_channels = p.config.hbm.pseudo_channels;
    for (size_t l = 0; l < p.noc.topology().links(); ++l)
        n.links.push_back(p.noc.topology().link_name(l));
    return n;
}

void MemorySystemNames::add_use(std::vector<ResourceUse>& out, bool busiest_pc, double window_ns) const {
    // The memory models' utilizations are over the whole simulated time; the window (a kernel's
    // profiled span, after its launch overhead, when nothing moves) rescales them to it.
    double elapsed = now_ns();
    double window = window_ns > 0 ? window_ns : elapsed;
    double scale = window > 0 ? elapsed / window : 1;
    for (size_t s = 0; s < stacks.size(); ++s) {
        out.push_back({fmt::format("hbm stack {}", s), scale * stats().value(stacks[s] + ".utilization")});
        if (!busiest_pc || window <= 0)
            continue;
        ResourceUse pc{"", -1};
        for (uint32_t c = 0; c < pseudo_channels; ++c) {
            double u = stats().value(fmt::format("{}.pc{}.busy_ns", stacks[s], c)) / window;
            if (u > pc.utilization)
                pc = {fmt::format("hbm stack {} pc {}", s, c), u};
        }
        out.push_back(pc);
    }
    for (size_t t = 0; t < dmas.size(); ++t)
        out.push_back({fmt::format("tile {} dma engines", t), scale * stats().value(dmas[t] + ".utilization")});
    for (auto& l : links)
        out.push_back({"noc " + l, scale * stats().value(noc + "." + l + ".utilization")});
}

std::string resource_kind(const std::string& r) {
    if (r.rfind("hbm", 0) == 0)
        return "hbm";
    if (r.rfind("noc", 0) == 0)
        return "noc";
    if (r.find("dma engines") != std::string::npos)
        return "dma";
    if (r.find("dma issue") != std::string::npos)
        return "dma issue";
    return "engine";
}

ResourceUse busiest(const std::vector<ResourceUse>& use) {
    if (use.empty())
        return {};
    return *std::max_element(use.begin(), use.end(),
                             [](const ResourceUse& a, const ResourceUse& b) { return a.utilization < b.utilization; });
}

} // namespace nctlm
