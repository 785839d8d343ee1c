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
} // namespace

FlowNetwork::FlowNetwork(sc_core::sc_module_name name, const DmaConfig& dma, const NocConfig& noc,
                         const HbmConfig& hbm, const AddressMap& map, const Topology& topology,
                         std::vector<ChipParts> chips, const ChipTopology* wiring, const LinkConfig& link,
                         flow::FlowTable table, flow::Sharing sharing)
    : sc_module(name), dma_(dma), noc_cfg_(noc), hbm_(hbm), map_(map), split_(hbm, map), topology_(topology),
      wiring_(wiring ? std::optional<ChipTopology>(*wiring) : std::nullopt), link_cfg_(link),
      table_(std::move(table)), solver_(sharing), hop_ns_(noc.hop_latency().ns),
      completion_ns_(dma.clock.cycles(dma.completion_cycles).ns),
      refresh_outage_(hbm.model == HbmModel::Banked && hbm.refresh == RefreshMode::AllBank),
      descriptors_(stats().counter(std::string(this->name()) + ".descriptors", "")),
      wakes_(stats().counter(std::string(this->name()) + ".kernel_wakes", "")) {
    for (ChipParts& c : chips) {
        controllers_.insert(controllers_.end(), c.controllers.begin(), c.controllers.end());
        noc_bursts_.push_back(&stats().counter(c.noc_name + ".bursts", ""));
    }
    const double dma_rate = dma.data_bandwidth().bytes_per_s / 1e9;
    // PCs first: a usage vector lists its resources by id, and a solve stops at the first full one
    // (the pseudo-channels are the resources that fill).
    std::vector<uint32_t> all_pcs;
    for (size_t c = 0; c < chips.size(); ++c)
        for (uint32_t s = 0; s < hbm.stacks; ++s)
            for (uint32_t p = 0; p < hbm.pseudo_channels; ++p) {
                pc_.push_back(solver_.add_resource(table_.peak()));
                all_pcs.push_back(pc_.back());
            }
    for (size_t l = 0; l < topology_.links(); ++l) {
        LinkKind k = topology_.kind(l);
        bool ring = k == LinkKind::RingClockwise || k == LinkKind::RingCounter;
        link_bandwidth_.push_back((ring ? noc.ring_bandwidth : noc.link_bandwidth).bytes_per_s / 1e9);
    }
    for (size_t c = 0; c < chips.size(); ++c)
        for (size_t l = 0; l < topology_.links(); ++l) {
            link_.push_back(solver_.add_resource(link_bandwidth_[l]));
            if (topology_.kind(l) == LinkKind::TileToRouter) {
                pipe_.push_back(solver_.add_resource(dma_rate));  // tile links come first, in tile order
                tiles_per_chip_ += c == 0;
            }
        }
    if (wiring_) {
        neuron_link_bandwidth_ = link.wire_bandwidth.bytes_per_s / 1e9;
        neuron_link_latency_ = link.latency.ns;
        for (uint32_t c = 0; c < wiring_->chips(); ++c)
            for (uint32_t p = 0; p < wiring_->ports(); ++p)
                neuron_link_.push_back(solver_.add_resource(neuron_link_bandwidth_));
    }
    routes_.emplace(topology_, tiles_per_chip_, hbm.stacks, wiring);
    last_end_.assign(pipe_.size(), ~uint64_t(0));
    last_shape_.resize(pipe_.size());
    if (refresh_outage_) {  // every PC refreshes at k x tREFI for tRFC (PcScheduler's schedule)
        DramTiming t = DramTiming::from(hbm);
        solver_.add_outage(all_pcs, t.refi, t.refi, t.rfc);
    }
    // Tiles streaming through one PC at once reopen each other's rows: what it sustains by the
    // number of tiles crossing it, measured on the banked model (FlowTable::shared_fraction).
    const uint64_t request = std::min<uint64_t>(dma.burst_size, hbm.interleave);
    std::vector<double> shared;
    for (uint32_t n = 1; n <= flow::FlowTable::kStreams.back(); ++n)
        shared.push_back(std::clamp(table_.shared_fraction(request, false, n, !refresh_outage_), 1e-3, 1.0));
    for (uint32_t r : all_pcs)
        solver_.set_sharing_fraction(r, shared);
    refused_class_ = solver_.add_class({}, 1);  // descriptors refused at once move nothing
    collect_ = [this](uint64_t slot, double) { finished_.push_back(slot); };
    SC_METHOD(run);
    sensitive << wake_;
    dont_initialize();
}

void FlowNetwork::attach(DmaEngine& engine, uint32_t chip) {
    engine.set_flow(*this, chip * tiles_per_chip_ + engine.tile());
}

FlowNetwork::Shape FlowNetwork::make_shape(uint32_t tile, const DmaDescriptor& d, bool sequential) {
    Shape s;
    const uint64_t bs = dma_.burst_size, request = std::min<uint64_t>(bs, d.bytes);
    s.bursts = (d.address % bs + d.bytes + bs - 1) / bs;
    std::vector<double> on_pc(hbm_.stacks * hbm_.pseudo_channels, 0);
    auto loc = map_.map(d.address);
    if (!loc) {
        s.mapped = false;
        s.unmapped_address = d.address;
        return s;
    }
    s.chip = loc->chip;
    const uint64_t base = map_.chip_base(s.chip);
    if (!split_.split(d.address - base, d.bytes, on_pc, s.unmapped_address)) {
        s.mapped = false;
        s.unmapped_address += base;
        return s;
    }
    const auto pattern = sequential ? flow::PcPattern::Sequential : flow::PcPattern::Random;
    const double eff = table_.sustained(request, pattern, d.write, !refresh_outage_) / table_.peak();
    const double wire = double(noc_cfg_.request_bytes), issue_bytes = wire + (d.write ? double(request) : 0);
    const double link_wire = double(link_cfg_.request_bytes), link_issue = link_wire + (d.write ? double(request) : 0);
    const uint32_t links = uint32_t(topology_.links());
    uint32_t pcs_touched = 0;
    for (double b : on_pc)
        pcs_touched += b > 0;
    const double t_issue = issue_bytes / link_bandwidth_[routes_->route(tile / tiles_per_chip_, tile % tiles_per_chip_, s.chip, loc->stack).there_noc.front() % links];
    s.issue = double(s.bursts) * t_issue;
    // Its requests leave one per t_issue: the last PC's first one (min(bursts, PCs) - 1) later.
    const double spread = double(std::min<uint64_t>(s.bursts, pcs_touched) - 1) * t_issue;
    // The PC's own access latency beyond the time its bytes take at the PC's rate (that is the flow's).
    const double at_pc = std::max(0.0, table_.cold_latency(request, d.write) - double(request) / (eff * table_.peak()));
    const uint32_t first_pc = s.chip * hbm_.stacks * hbm_.pseudo_channels;
    for (uint32_t st = 0; st < hbm_.stacks; ++st) {
        double in_stack = 0;
        uint64_t requests = 0;
        std::map<uint32_t, double> usage;
        for (uint32_t p = 0; p < hbm_.pseudo_channels; ++p) {
            const double b = on_pc[st * hbm_.pseudo_channels + p];
            if (b <= 0)
                continue;
            in_stack += b;
            requests += uint64_t(std::ceil(b / double(request)));
            usage[pc_[first_pc + st * hbm_.pseudo_channels + p]] = b;
        }
        if (in_stack <= 0)
            continue;
        for (auto& [r, b] : usage)
            b = b / in_stack / eff;
        usage[pipe_[tile]] += 1;
        const flow::ChipRoute r = routes_->route(tile / tiles_per_chip_, tile % tiles_per_chip_, s.chip, st);
        double slowest_there = 1e300, slowest_back = 1e300;
        for (uint32_t l : r.there_noc) {
            usage[link_[l]] += d.write ? 1 + wire / double(request) : wire / double(request);
            slowest_there = std::min(slowest_there, link_bandwidth_[l % links]);
        }
        for (uint32_t l : r.back_noc) {
            usage[link_[l]] += d.write ? wire / double(request) : 1;
            slowest_back = std::min(slowest_back, link_bandwidth_[l % links]);
        }
        // NeuronLink directions: link.request_bytes per read request and per write acknowledgement,
        // the direction without the data carrying headers only (its share reserved under in_order).
        std::vector<uint32_t> headers;
        for (uint32_t l : r.there_link) {
            usage[neuron_link_[l]] += d.write ? 1 + link_wire / double(request) : link_wire / double(request);
            if (!d.write)
                headers.push_back(neuron_link_[l]);
        }
        for (uint32_t l : r.back_link) {
            usage[neuron_link_[l]] += d.write ? link_wire / double(request) : 1;
            if (d.write)
                headers.push_back(neuron_link_[l]);
        }
        // There: hops and the request's own serialization (cut through: its slowest stretch); back:
        // hops (a write's ack too). Each NeuronLink hop: link.latency both ways.
        double serialize_there = issue_bytes / slowest_there, serialize_back = d.write ? wire / slowest_back : 0;
        if (!r.there_link.empty()) {
            serialize_there = std::max(serialize_there, link_issue / neuron_link_bandwidth_);
            if (d.write)
                serialize_back = std::max(serialize_back, link_wire / neuron_link_bandwidth_);
        }
        const double route_ns = double(r.there_noc.size() + r.back_noc.size()) * hop_ns_ +
                                double(r.there_link.size() + r.back_link.size()) * neuron_link_latency_ +
                                serialize_there + at_pc + serialize_back;
        s.parts.push_back({s.chip * hbm_.stacks + st, uint64_t(in_stack), requests, intern_class(usage, headers, tile),
                           spread + route_ns + completion_ns_});
        if (s.nocs.empty())
            s.nocs = r.chips;
    }
    return s;
}

// Classes by usage vector (and header usage): descriptors of one shape on one tile share one (one FIFO).
uint32_t FlowNetwork::intern_class(const std::map<uint32_t, double>& usage, const std::vector<uint32_t>& headers,
                                   uint32_t tile) {
    std::string key;
    key.reserve(usage.size() * 12 + headers.size() * 4);
    for (const auto& [r, w] : usage) {
        key.append(reinterpret_cast<const char*>(&r), sizeof r);
        key.append(reinterpret_cast<const char*>(&w), sizeof w);
    }
    for (uint32_t r : headers)
        key.append(reinterpret_cast<const char*>(&r), sizeof r);
    auto [it, fresh] = class_index_.try_emplace(key, 0);
    if (fresh) {
        std::vector<flow::Usage> u;
        for (const auto& [r, w] : usage)
            u.push_back({r, w});
        it->second = solver_.add_class(std::move(u));
        solver_.set_class_group(it->second, tile);  // a tile's descriptors: one stream at a PC
        for (uint32_t r : headers)
            solver_.set_header_usage(it->second, r);
    }
    return it->second;
}

const FlowNetwork::Shape& FlowNetwork::shape(uint32_t tile, const DmaDescriptor& d, bool sequential) {
    key_.clear();
    key_.push_back(uint64_t(tile) << 2 | uint64_t(d.write) << 1 | uint64_t(sequential));
    // The chip from the address's top bits (AddressMap::map's first step; no PC needed here).
    const uint64_t chip = d.address >> map_.chip_address_bit();
    key_.push_back(chip);
    if (chip >= map_.chips() ||
        !split_.key(d.address - map_.chip_base(uint32_t(chip)), d.bytes, key_)) {  // unmapped: refused once, never cached
        shapes_.push_back(make_shape(tile, d, sequential));
        return shapes_.back();
    }
    LastShape& last = last_shape_[tile];
    if (last.index != ~size_t(0) && last.key == key_)
        return shapes_[last.index];
    auto [it, fresh] = shape_index_.try_emplace(key_, shapes_.size());
    if (fresh)
        shapes_.push_back(make_shape(tile, d, sequential));
    last.key = key_;
    last.index = it->second;
    return shapes_[it->second];
}

double FlowNetwork::start(DmaEngine& engine, DmaDescriptor& d, double start_ns) {
    const uint32_t tile = engine.flow_tile();
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
    in_flight_[slot] = {&engine, &d, &s, s.mapped ? s.parts.size() : 1};
    descriptors_.add(1);
    if (!s.mapped) {  // refused at once, as the NoC refuses a burst outside the map
        d.failed = true;
        d.error = fmt::format("{}: {} of {} B at address 0x{:x} failed: address error: outside the HBM address map "
                              "(queue {}, descriptor {})",
                              engine.name(), d.write ? "write" : "read", d.bytes, s.unmapped_address, d.queue, d.id);
        solver_.add_flow(refused_class_, 0, start_ns, slot);
    } else {
        for (const Part& p : s.parts)
            solver_.add_flow(p.cls, double(p.bytes), start_ns + p.latency, slot);
    }
    if (!running_)
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
    running_ = true;
    const double now = now_ns();
    finished_.clear();
    solver_.advance(now + kGrid, collect_);
    for (uint64_t slot : finished_) {
        if (--in_flight_[slot].parts_left > 0)
            continue;  // its other stacks are not done yet
        InFlight f = in_flight_[slot];
        free_slots_.push_back(slot);
        DmaDescriptor& d = *f.d;
        uint64_t read = 0, written = 0;
        if (f.shape->mapped) {
            for (uint32_t c : f.shape->nocs)
                noc_bursts_[c]->add(double(f.shape->bursts));
            for (const Part& p : f.shape->parts)
                controllers_[p.stack]->record_flow(d.write, p.bytes, p.requests, d.t_first_issue, now);
            (d.write ? written : read) = d.bytes;
            if (hbm_.functional && d.data) {
                uint64_t unused = 0, done = 0;
                const uint32_t first = f.shape->chip * hbm_.stacks;
                split_.for_each_piece(d.address - map_.chip_base(f.shape->chip), d.bytes, unused,
                                      [&](uint32_t st, uint32_t, uint64_t off, uint64_t len) {
                    controllers_[first + st]->access_flow(off, d.data + done, len, d.write);
                    done += len;
                });
            }
        }
        f.engine->flow_done(d, read, written);
    }
    running_ = false;
    schedule();
}

void FlowNetwork::end_of_simulation() {
    const std::string base = name();
    stats().counter(base + ".solver_events", "").value = double(solver_.events());
    stats().counter(base + ".solves", "").value = double(solver_.solves());
    stats().counter(base + ".classes", "").value = double(solver_.classes());
    stats().counter(base + ".solver_components", "").value = double(solver_.components());
    stats().counter(base + ".solver_promotions", "").value = double(solver_.promotions());
    stats().counter(base + ".solver_demotions", "").value = double(solver_.demotions());
}

} // namespace nctlm
