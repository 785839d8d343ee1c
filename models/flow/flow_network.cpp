#include "models/flow/flow_network.h"

#include "models/common/errors.h"
#include "models/common/sim.h"
#include "models/dma/dma_engine.h"
#include "models/hbm/hbm_controller.h"

#include <algorithm>
#include <cstring>
#include <fmt/format.h>
#include <map>
#include <numeric>

namespace nctlm {

namespace {
constexpr double kGrid = 1e-6;  // ns: the kernel's 1 fs grid; events this close to now are due
uint64_t lcm(uint64_t a, uint64_t b) { return a / std::gcd(a, b) * b; }
} // namespace

size_t FlowNetwork::KeyHash::operator()(const Key& k) const {
    uint64_t h = k.bytes * 0x9E3779B97F4A7C15ull ^ (k.phase + 0x632BE59BD9B4E019ull) * 31;
    h ^= (uint64_t(k.tile) << 40) ^ (uint64_t(k.window) << 20) ^ (k.write ? 2 : 0) ^ (k.sequential ? 1 : 0);
    return size_t(h ^ (h >> 29));
}

FlowNetwork::FlowNetwork(sc_core::sc_module_name name, const DmaConfig& dma, const NocConfig& noc,
                         const HbmConfig& hbm, const AddressMap& map, const Topology& topology,
                         std::vector<HbmController*> controllers, const std::string& noc_name, flow::FlowTable table)
    : sc_module(name), dma_(dma), noc_cfg_(noc), hbm_(hbm), map_(map), topology_(topology),
      controllers_(std::move(controllers)), table_(std::move(table)),
      solver_(flow::Sharing::InOrder), hop_ns_(noc.hop_latency().ns),
      completion_ns_(dma.clock.cycles(dma.completion_cycles).ns),
      refresh_outage_(hbm.model == HbmModel::Banked && hbm.refresh == RefreshMode::AllBank),
      descriptors_(stats().counter(std::string(this->name()) + ".descriptors", "")),
      wakes_(stats().counter(std::string(this->name()) + ".kernel_wakes", "")),
      noc_bursts_(stats().counter(noc_name + ".bursts", "")) {
    const double dma_rate = dma.data_bandwidth().bytes_per_s / 1e9;
    for (size_t l = 0; l < topology_.links(); ++l) {
        LinkKind k = topology_.kind(l);
        bool ring = k == LinkKind::RingClockwise || k == LinkKind::RingCounter;
        link_bandwidth_.push_back((ring ? noc.ring_bandwidth : noc.link_bandwidth).bytes_per_s / 1e9);
        link_.push_back(solver_.add_resource(link_bandwidth_.back()));
        if (k == LinkKind::TileToRouter)
            pipe_.push_back(solver_.add_resource(dma_rate));  // tile links come first, in tile order
    }
    last_end_.assign(pipe_.size(), ~uint64_t(0));
    std::vector<uint32_t> all_pcs;
    for (uint32_t s = 0; s < hbm.stacks; ++s)
        for (uint32_t p = 0; p < hbm.pseudo_channels; ++p) {
            pc_.push_back(solver_.add_resource(table_.peak()));
            all_pcs.push_back(pc_.back());
        }
    if (refresh_outage_) {  // every PC refreshes at k x tREFI for tRFC (PcScheduler's schedule)
        DramTiming t = DramTiming::from(hbm);
        solver_.add_outage(all_pcs, t.refi, t.refi, t.rfc);
    }
    refused_class_ = solver_.add_class({}, 1);  // descriptors refused at once move nothing
    contiguous_period_ = uint64_t(hbm.pseudo_channels) * hbm.interleave;
    interleaved_period_ = uint64_t(hbm.stacks) * lcm(hbm.stack_interleave, contiguous_period_);
    SC_METHOD(run);
    sensitive << wake_;
    dont_initialize();
}

template <class F>
bool FlowNetwork::for_each_piece(uint64_t address, uint64_t bytes, uint64_t& unmapped, F&& fn) const {
    const uint64_t end = address + bytes;
    while (address < end) {
        auto loc = map_.map(address);
        if (!loc) {
            unmapped = address;
            return false;
        }
        uint64_t len = std::min(end - address, hbm_.interleave - loc->offset % hbm_.interleave);
        if (address >= map_.total_bytes()) {  // interleaved window: a stack chunk ends too
            const uint64_t rel = address - map_.interleaved_base();
            len = std::min(len, hbm_.stack_interleave - rel % hbm_.stack_interleave);
        }
        fn(loc->stack, loc->pseudo_channel, loc->offset, len);
        address += len;
    }
    return true;
}

FlowNetwork::Shape FlowNetwork::make_shape(uint32_t tile, const DmaDescriptor& d, bool sequential) {
    Shape s;
    const uint64_t bs = dma_.burst_size, request = std::min<uint64_t>(bs, d.bytes);
    s.bursts = (d.address % bs + d.bytes + bs - 1) / bs;
    // Bytes per stack x PC: whole periods of the address map spread evenly, the rest piece by piece,
    // so the cost does not grow with the descriptor's size.
    std::vector<double> on_pc(pc_.size(), 0);
    uint64_t address = d.address, left = d.bytes;
    while (left > 0) {
        auto loc = map_.map(address);
        if (!loc) {
            s.mapped = false;
            s.unmapped_address = address;
            return s;
        }
        const bool interleaved = address >= map_.total_bytes();
        const uint64_t window_end = interleaved ? map_.interleaved_base() + map_.total_bytes()
                                                : map_.stack_base(loc->stack) + hbm_.stack_capacity;
        const uint64_t segment = std::min(left, window_end - address);
        const uint64_t period = interleaved ? interleaved_period_ : contiguous_period_;
        const uint64_t whole = segment / period, rest = segment % period;
        if (whole) {
            const uint32_t first = interleaved ? 0 : loc->stack, count = interleaved ? hbm_.stacks : 1;
            const double each = double(whole * period) / double(count * hbm_.pseudo_channels);
            for (uint32_t st = first; st < first + count; ++st)
                for (uint32_t p = 0; p < hbm_.pseudo_channels; ++p)
                    on_pc[st * hbm_.pseudo_channels + p] += each;
        }
        uint64_t unmapped = 0;
        if (!for_each_piece(address, rest, unmapped, [&](uint32_t st, uint32_t p, uint64_t, uint64_t len) {
                on_pc[st * hbm_.pseudo_channels + p] += double(len);
            })) {
            s.mapped = false;
            s.unmapped_address = unmapped;
            return s;
        }
        address += segment;
        left -= segment;
    }
    const auto pattern = sequential ? flow::PcPattern::Sequential : flow::PcPattern::Random;
    const double eff = table_.sustained(request, pattern, d.write, !refresh_outage_) / table_.peak();
    const double total = double(d.bytes), wire = double(noc_cfg_.request_bytes);
    std::map<uint32_t, double> usage;
    usage[pipe_[tile]] += 1;
    uint32_t pcs_touched = 0;
    double route = 0, issue_bytes = wire + (d.write ? double(request) : 0);
    for (uint32_t st = 0; st < hbm_.stacks; ++st) {
        double in_stack = 0;
        uint64_t requests = 0;
        for (uint32_t p = 0; p < hbm_.pseudo_channels; ++p) {
            const double b = on_pc[st * hbm_.pseudo_channels + p];
            if (b <= 0)
                continue;
            in_stack += b;
            ++pcs_touched;
            requests += uint64_t(std::ceil(b / double(request)));
            usage[pc_[st * hbm_.pseudo_channels + p]] += b / total / eff;
        }
        if (in_stack <= 0)
            continue;
        s.parts.push_back({st, uint64_t(in_stack), requests});
        const double f = in_stack / total;
        const auto& there = topology_.request_route(tile, st);
        const auto& back = topology_.response_route(st, tile);
        double slowest_there = 1e300, slowest_back = 1e300;
        for (uint32_t l : there) {
            usage[link_[l]] += f * (d.write ? 1 + wire / double(request) : wire / double(request));
            slowest_there = std::min(slowest_there, link_bandwidth_[l]);
        }
        for (uint32_t l : back) {
            usage[link_[l]] += f * (d.write ? wire / double(request) : 1);
            slowest_back = std::min(slowest_back, link_bandwidth_[l]);
        }
        // There: hops and the request's own serialization; the PC's access latency beyond the time
        // its bytes take at the PC's rate (that time is the flow's); back: hops (a write's ack too).
        const double at_pc = std::max(0.0, table_.cold_latency(request, d.write) - double(request) / (eff * table_.peak()));
        route = std::max(route, double(there.size()) * hop_ns_ + issue_bytes / slowest_there + at_pc +
                                    double(back.size()) * hop_ns_ + (d.write ? wire / slowest_back : 0));
    }
    const double t_issue = issue_bytes / link_bandwidth_[topology_.request_route(tile, s.parts.front().stack).front()];
    s.issue = double(s.bursts) * t_issue;
    s.latency = double(std::min<uint64_t>(s.bursts, pcs_touched) - 1) * t_issue + route + completion_ns_;
    // The class: its usage vector, interned (descriptors of one shape on one tile share it).
    std::string key;
    key.reserve(usage.size() * 12);
    for (const auto& [r, w] : usage) {
        key.append(reinterpret_cast<const char*>(&r), sizeof r);
        key.append(reinterpret_cast<const char*>(&w), sizeof w);
    }
    auto [it, fresh] = class_index_.try_emplace(key, 0);
    if (fresh) {
        std::vector<flow::Usage> u;
        for (const auto& [r, w] : usage)
            u.push_back({r, w});
        it->second = solver_.add_class(std::move(u));
    }
    s.cls = it->second;
    return s;
}

const FlowNetwork::Shape& FlowNetwork::shape(uint32_t tile, const DmaDescriptor& d, bool sequential) {
    Key k{tile, 0, d.write, sequential, d.bytes, 0};
    if (auto loc = map_.map(d.address)) {
        const bool interleaved = d.address >= map_.total_bytes();
        k.window = interleaved ? hbm_.stacks : loc->stack;
        k.phase = interleaved ? (d.address - map_.interleaved_base()) % interleaved_period_
                              : loc->offset % contiguous_period_;
        const uint64_t window_end = interleaved ? map_.interleaved_base() + map_.total_bytes()
                                                : map_.stack_base(loc->stack) + hbm_.stack_capacity;
        if (d.address + d.bytes > window_end)  // crosses a window's end: not like any other
            k.phase = d.address + (uint64_t(1) << 63);
    } else {
        k.window = ~0u;
        k.phase = d.address;
    }
    auto [it, fresh] = shape_index_.try_emplace(k, shapes_.size());
    if (fresh)
        shapes_.push_back(make_shape(tile, d, sequential));
    return shapes_[it->second];
}

double FlowNetwork::start(DmaEngine& engine, DmaDescriptor& d, double start_ns) {
    const uint32_t tile = engine.tile();
    const bool sequential = d.address == last_end_[tile] || d.bytes >= 2 * hbm_.interleave;
    last_end_[tile] = d.address + d.bytes;
    const Shape& s = shape(tile, d, sequential);
    uint64_t slot;
    if (free_slots_.empty()) {
        slot = in_flight_.size();
        in_flight_.emplace_back();
    } else {
        slot = free_slots_.back();
        free_slots_.pop_back();
    }
    in_flight_[slot] = {&engine, &d, &s};
    descriptors_.add(1);
    if (!s.mapped) {  // refused at once, as the NoC refuses a burst outside the map
        d.failed = true;
        d.error = fmt::format("{}: {} of {} B at address 0x{:x} failed: address error: outside the HBM address map "
                              "(queue {}, descriptor {})",
                              engine.name(), d.write ? "write" : "read", d.bytes, s.unmapped_address, d.queue, d.id);
        solver_.add_flow(refused_class_, 0, start_ns, slot);
    } else {
        solver_.add_flow(s.cls, double(d.bytes), start_ns + s.latency, slot);
    }
    schedule();
    return s.issue;
}

void FlowNetwork::schedule() {
    const double t = solver_.next_event();
    if (t < flow::kNever)
        wake_.notify(until(t));
}

void FlowNetwork::run() {
    wakes_.add(1);
    const double now = now_ns();
    finished_.clear();
    solver_.advance(now + kGrid, [this](uint64_t slot, double) { finished_.push_back(slot); });
    for (uint64_t slot : finished_) {
        InFlight f = in_flight_[slot];
        free_slots_.push_back(slot);
        DmaDescriptor& d = *f.d;
        uint64_t read = 0, written = 0;
        if (f.shape->mapped) {
            noc_bursts_.add(double(f.shape->bursts));
            for (const Part& p : f.shape->parts)
                controllers_[p.stack]->record_flow(d.write, p.bytes, p.requests, d.t_first_issue, now);
            (d.write ? written : read) = d.bytes;
            if (hbm_.functional && d.data) {
                uint64_t unused = 0, done = 0;
                for_each_piece(d.address, d.bytes, unused, [&](uint32_t st, uint32_t, uint64_t off, uint64_t len) {
                    controllers_[st]->access_flow(off, d.data + done, len, d.write);
                    done += len;
                });
            }
        }
        f.engine->flow_done(d, read, written);
    }
    schedule();
}

void FlowNetwork::end_of_simulation() {
    const std::string base = name();
    stats().counter(base + ".solver_events", "").value = double(solver_.events());
    stats().counter(base + ".solves", "").value = double(solver_.solves());
    stats().counter(base + ".classes", "").value = double(solver_.classes());
}

} // namespace nctlm
