#include "testbenches/traffic/traffic.h"
#include "models/checker/bind.h"

#include "models/common/peq.h"
#include "models/common/sim.h"
#include "models/common/transfer.h"

#include <deque>
#include <fmt/format.h>
#include <tlm_utils/simple_initiator_socket.h>

namespace nctlm {

const FieldList<TrafficConfig>& TrafficConfig::fields() {
    using C = TrafficConfig;
    static const FieldList<C> f = {
        choice("path", &C::path, {{"hbm", TrafficPath::Hbm}, {"dma", TrafficPath::Dma}}, "hbm",
               "hbm: a generator bound to one stack's controller; dma: every tile's DMA engine, through the NoC"),
        choice("pattern", &C::pattern,
               {{"sequential", TrafficPattern::Sequential},
                {"random", TrafficPattern::Random},
                {"strided", TrafficPattern::Strided}},
               "sequential", "request i at i x request_bytes, uniformly random, or at i x stride (in the region)"),
        nctlm::bytes("request_bytes", &C::request_bytes, "2 KiB", 64, 32 * 1024,
                     "bytes per request (the hbm path cuts it at PC-interleave boundaries, the DMA at bursts)"),
        real("read_fraction", &C::read_fraction, "1", 0, 1, "probability that a request is a read (seeded)"),
        count("window", &C::window, "16", 1, 1 << 20,
              "requests outstanding: per stack (hbm path) or per tile (dma path); closed loop"),
        nctlm::bytes("stride", &C::stride, "4 KiB", 64, 1ull << 40, "distance between requests (strided pattern)"),
        nctlm::bytes("region", &C::region, "0 B", 0, 1ull << 40,
                     "bytes of the stack the pattern covers (0 B: the whole stack, shared evenly by its tiles)"),
        nctlm::duration("duration", &C::duration, "20 us", "stop issuing new requests at this time"),
        nctlm::duration("warmup", &C::warmup, "2 us", "results count requests finishing after this time"),
        count("seed", &C::seed, "1", 0, ~0ull >> 1, "random seed of addresses and directions"),
        count("stack", &C::stack, "0", 0, 63, "the stack (hbm path)"),
    };
    return f;
}

TrafficSource::TrafficSource(const TrafficConfig& c, uint64_t region_bytes, uint64_t seed)
    : cfg_(c), region_(region_bytes), slots_(std::max<uint64_t>(1, region_bytes / c.request_bytes)), rng_(seed) {}

TrafficSource::Request TrafficSource::next() {
    uint64_t i = i_++, offset = 0;
    switch (cfg_.pattern) {
    case TrafficPattern::Sequential:
        offset = (i % slots_) * cfg_.request_bytes;
        break;
    case TrafficPattern::Random:
        offset = (rng_() % slots_) * cfg_.request_bytes;
        break;
    case TrafficPattern::Strided:
        offset = (i * cfg_.stride) % (slots_ * cfg_.request_bytes);
        offset -= offset % cfg_.request_bytes;
        break;
    }
    bool write = cfg_.read_fraction < 1 && std::generate_canonical<double, 53>(rng_) >= cfg_.read_fraction;
    return {offset, write};
}

namespace {

// The figures every generator collects, for requests finishing in the measured window.
struct Tally {
    Histogram issue_latency;  // reads: generator issue -> last byte
    uint64_t requests = 0;
    void finished(bool write, double issued_ns, double last_ns, const TrafficConfig& c) {
        if (last_ns < c.warmup.ns || last_ns > c.duration.ns)
            return;
        ++requests;
        if (!write)
            issue_latency.add(last_ns - issued_ns);
    }
};

// A closed-loop initiator on one controller socket: keeps `window` requests outstanding, cuts each at
// PC-interleave boundaries, waits for END_REQ before the next BEGIN_REQ (request exclusion).
class HbmInitiator : public sc_core::sc_module {
public:
    tlm_utils::simple_initiator_socket<HbmInitiator> socket;

    HbmInitiator(sc_core::sc_module_name name, const TrafficConfig& cfg, uint64_t base, uint64_t region,
                 uint64_t interleave, Tally& tally)
        : sc_module(name), socket("socket"), cfg_(cfg), base_(base), interleave_(interleave), source_(cfg, region, cfg.seed),
          tally_(tally), done_peq_(this, &HbmInitiator::chunk_done), scratch_(std::max<uint64_t>(cfg.request_bytes, 64)) {
        socket.register_nb_transport_bw(this, &HbmInitiator::nb_transport_bw);
        sc_core::sc_spawn([this] { run(); }, "generator");
        sc_core::sc_spawn_options opts;
        opts.spawn_method();
        opts.set_sensitivity(&release_);
        opts.dont_initialize();
        sc_core::sc_spawn([this] { release_finished(); }, "release", &opts);
    }

private:
    struct Request {
        bool write;
        double issued_ns;
        uint32_t chunks_left;
        double last_ns;
        uint64_t address;
    };

    // A request is generated (its issue time) the moment a window slot frees, like the reference
    // driver; requests the socket cannot take yet wait here in order, outside the controller.
    void generate() {
        while (outstanding_ < cfg_.window && now_ns() < cfg_.duration.ns) {
            TrafficSource::Request r = source_.next();
            uint64_t id;
            if (free_ids_.empty()) {
                id = requests_.size();
                requests_.emplace_back();
            } else {
                id = free_ids_.back();
                free_ids_.pop_back();
            }
            requests_[id] = {r.write, now_ns(), 0, 0, base_ + r.offset};
            ++outstanding_;
            backlog_.push_back(id);
        }
        generated_.notify(sc_core::SC_ZERO_TIME);
    }

    void run() {
        generate();
        while (!backlog_.empty() || now_ns() < cfg_.duration.ns) {
            if (backlog_.empty()) {
                sc_core::wait(generated_);
                continue;
            }
            uint64_t id = backlog_.front();
            backlog_.pop_front();
            send(id);
        }
    }

    void send(uint64_t id) {
        Request& r = requests_[id];
        uint64_t addr = r.address, end = addr + cfg_.request_bytes;
        r.chunks_left = uint32_t((end - 1) / interleave_ - addr / interleave_ + 1);
        bool write = r.write;
        while (addr < end) {
            uint64_t next = std::min(end, (addr / interleave_ + 1) * interleave_);
            tlm::tlm_generic_payload* p = pool_.acquire();
            p->set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
            p->set_address(addr);
            p->set_data_length(uint32_t(next - addr));
            p->set_streaming_width(uint32_t(next - addr));
            p->set_data_ptr(scratch_.data());  // timing only: a valid buffer nobody reads
            p->set_byte_enable_ptr(nullptr);
            p->set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
            TransferExt& x = ext<TransferExt>(*p);
            x = TransferExt{};
            x.tag = id;
            x.timing_only = true;
            x.issue_ns = x.head_ns = x.tail_ns = now_ns();
            tlm::tlm_phase phase = tlm::BEGIN_REQ;
            sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
            tlm::tlm_sync_enum s = socket->nb_transport_fw(*p, phase, delay);
            if (s == tlm::TLM_COMPLETED)
                sim_refused(*p);
            else if (s == tlm::TLM_ACCEPTED || phase == tlm::BEGIN_REQ)
                sc_core::wait(end_req_);
            addr = next;
        }
    }

    [[noreturn]] void sim_refused(tlm::tlm_generic_payload& p) {
        SC_REPORT_FATAL("/nctlm/traffic", fmt::format("the controller refused a {} B request at 0x{:x}: {}",
                                                      p.get_data_length(), p.get_address(), p.get_response_string())
                                              .c_str());
        std::abort();
    }

    tlm::tlm_sync_enum nb_transport_bw(tlm::tlm_generic_payload& p, tlm::tlm_phase& phase, sc_core::sc_time&) {
        if (phase == tlm::END_REQ) {
            end_req_.notify(sc_core::SC_ZERO_TIME);
            return tlm::TLM_ACCEPTED;
        }
        if (phase != tlm::BEGIN_RESP)
            return tlm::TLM_ACCEPTED;
        if (!p.is_response_ok())
            sim_refused(p);
        // BEGIN_RESP comes with the first data byte; the request is done with its last one.
        done_peq_.notify(p, tlm::BEGIN_RESP, until(ext<TransferExt>(p).tail_ns));
        return tlm::TLM_COMPLETED;
    }

    void chunk_done(tlm::tlm_generic_payload& p, const tlm::tlm_phase&) {
        Request& r = requests_[ext<TransferExt>(p).tag];
        r.last_ns = std::max(r.last_ns, now_ns());
        finished_.push_back(&p);  // released after this call returns, never inside the transport call
        release_.notify(sc_core::SC_ZERO_TIME);
        if (--r.chunks_left)
            return;
        tally_.finished(r.write, r.issued_ns, r.last_ns, cfg_);
        free_ids_.push_back(ext<TransferExt>(p).tag);
        --outstanding_;
        generate();
    }

    void release_finished() {
        for (auto* p : finished_)
            p->release();
        finished_.clear();
    }

    TrafficConfig cfg_;
    uint64_t base_, interleave_;
    TrafficSource source_;
    Tally& tally_;
    Peq<HbmInitiator> done_peq_;
    std::vector<unsigned char> scratch_;
    PayloadPool<TransferExt> pool_;
    std::vector<Request> requests_;
    std::vector<uint64_t> free_ids_;
    std::vector<tlm::tlm_generic_payload*> finished_;
    std::deque<uint64_t> backlog_;  // generated, not yet sent
    uint32_t outstanding_ = 0;
    sc_core::sc_event end_req_, generated_, release_;
};

} // namespace

struct TrafficTestbench::Impl {
    Tally tally;
    std::unique_ptr<HbmController> controller;  // hbm path: the generator's private stack
    std::unique_ptr<HbmInitiator> initiator;
    std::vector<HbmController*> measured;       // controllers whose figures count
    std::deque<DmaDescriptor> descriptors;
    std::vector<std::unique_ptr<TrafficSource>> sources;
    double peak_gbs = 0;
    bool banked = true;
};

TrafficTestbench::TrafficTestbench() : impl_(std::make_unique<Impl>()) {}
TrafficTestbench::~TrafficTestbench() = default;

void TrafficTestbench::configure(const ConfigTree& tree) {
    cfg_ = tree.load<TrafficConfig>("testbench");
    if (tree.effective().contains("platform"))
        tiles_ = tree.effective()["platform"]["tiles"].get<uint32_t>();
    if (!(cfg_.warmup < cfg_.duration)) {
        std::string msg = "testbench.warmup (" + format_duration(cfg_.warmup) +
                          ") must be shorter than testbench.duration (" + format_duration(cfg_.duration) + ")";
        throw ConfigError(tree.blame("testbench", "warmup", msg) + ": " + msg);
    }
    if (cfg_.duration.ns > 1e9)
        throw ConfigError(tree.where("testbench", "duration") +
                          ": testbench.duration above 1 s of simulated time is not supported by this testbench");
}

// Every request the window keeps outstanding holds a record: ~340 B per tile and window slot on the
// DMA path (descriptor, queue entry, live map node, burst payloads; measured: 709 MB RSS for 2
// tiles x 2^20 against 55 MB for 2^16), ~64 B per slot of the one stack's generator otherwise.
uint64_t TrafficTestbench::memory_estimate() const {
    return cfg_.path == TrafficPath::Dma ? uint64_t(cfg_.window) * tiles_ * 340 : uint64_t(cfg_.window) * 64;
}

void TrafficTestbench::build(Platform& p) {
    const HbmConfig& h = p.config.hbm;
    Impl& m = *impl_;
    m.banked = h.model == HbmModel::Banked;
    for (auto& c : p.hbm)
        c->measure_between(cfg_.warmup.ns, cfg_.duration.ns);
    if (cfg_.path == TrafficPath::Dma && p.config.sim.timing == TimingMode::Flow)  // docs/performance.md
        throw ConfigError("testbench 'traffic' does not run under sim.timing: flow: its figure is the bandwidth a "
                          "window of outstanding requests gets through the NoC's credits and the controller's "
                          "queues, which the flow model leaves out (6-22 % off AT on the shipped patterns, up to "
                          "241 % on random ones); run it with --timing at or lt");
    if (cfg_.path == TrafficPath::Hbm) {
        if (p.config.sim.timing != TimingMode::At)  // its generator is an AT initiator of its own
            throw ConfigError(std::string("testbench 'traffic' with testbench.path=hbm drives one controller with its "
                                          "own AT initiator and does not run under sim.timing: ") +
                              (p.config.sim.timing == TimingMode::Lt ? "lt" : "flow") +
                              "; use testbench.path=dma or --timing at");
        if (cfg_.stack >= h.stacks)
            throw ConfigError(fmt::format("testbench.stack={} but the platform has {} stacks (0..{})", cfg_.stack,
                                          h.stacks, h.stacks - 1));
        uint64_t region = cfg_.region ? cfg_.region : h.stack_capacity;
        if (region > h.stack_capacity || region < cfg_.request_bytes)
            throw ConfigError(fmt::format("testbench.region={} must lie between testbench.request_bytes and the "
                                          "stack's {}",
                                          format_bytes(region), format_bytes(h.stack_capacity)));
        m.controller = std::make_unique<HbmController>("traffic_hbm", h, p.address_map, cfg_.stack);
        m.controller->measure_between(cfg_.warmup.ns, cfg_.duration.ns);
        m.initiator = std::make_unique<HbmInitiator>("traffic_gen", cfg_, p.stack_address(cfg_.stack, 0), region,
                                                     h.interleave, m.tally);
        nctlm::bind(m.initiator->socket, m.controller->socket, "traffic_gen_hbm");
        m.measured = {m.controller.get()};
        m.peak_gbs = h.stack_bandwidth().gb_per_s();
        return;
    }
    // dma path: every tile to its local stack; tiles sharing a stack split it evenly.
    std::vector<uint32_t> sharing(h.stacks, 0), rank(p.tiles.size());
    for (uint32_t t = 0; t < p.tiles.size(); ++t)
        rank[t] = sharing[p.local_stack(t)]++;
    for (uint32_t s = 0; s < h.stacks; ++s)
        if (sharing[s]) {
            m.measured.push_back(p.hbm[s].get());
            m.peak_gbs += h.stack_bandwidth().gb_per_s();
        }
    if (cfg_.region > h.stack_capacity)  // each tile's share must stay inside its stack
        throw ConfigError(fmt::format("testbench.region={} is larger than a stack (hbm.stack_capacity={})",
                                      format_bytes(cfg_.region), format_bytes(h.stack_capacity)));
    for (uint32_t t = 0; t < p.tiles.size(); ++t) {
        uint32_t stack = p.local_stack(t);
        uint64_t share = (cfg_.region ? cfg_.region : h.stack_capacity) / sharing[stack];
        share -= share % h.interleave;
        if (share < cfg_.request_bytes)
            throw ConfigError(fmt::format("testbench.region gives tile {} only {} of stack {}", t, format_bytes(share),
                                          stack));
        uint64_t base = p.stack_address(stack, share * rank[t]);
        auto& source = *m.sources.emplace_back(std::make_unique<TrafficSource>(cfg_, share, cfg_.seed + t));
        DmaEngine& dma = p.tiles[t].dma;
        sc_core::sc_spawn(
            [this, &dma, &source, base] {
                Impl& m = *impl_;
                uint32_t outstanding = 0, queue = 0;
                sc_core::sc_event slot_free;
                std::vector<DmaDescriptor*> idle;
                while (now_ns() < cfg_.duration.ns) {
                    while (outstanding < cfg_.window && now_ns() < cfg_.duration.ns) {
                        DmaDescriptor* d;
                        if (idle.empty()) {
                            d = &m.descriptors.emplace_back();
                        } else {
                            d = idle.back();
                            idle.pop_back();
                        }
                        TrafficSource::Request r = source.next();
                        *d = DmaDescriptor{};
                        d->address = base + r.offset;
                        d->bytes = cfg_.request_bytes;
                        d->write = r.write;
                        d->queue = queue++ % dma.config().queues;
                        d->on_complete = [&, d](DmaDescriptor& done) {
                            m.tally.finished(done.write, done.t_post, done.t_done, cfg_);
                            idle.push_back(d);
                            --outstanding;
                            slot_free.notify(sc_core::SC_ZERO_TIME);
                        };
                        ++outstanding;
                        dma.post(*d);
                    }
                    if (outstanding >= cfg_.window)
                        sc_core::wait(slot_free);
                }
                while (outstanding)  // keep the locals alive until the last completion ran
                    sc_core::wait(slot_free);
            },
            fmt::format("traffic_tile{}", t).c_str());
    }
}

nlohmann::json TrafficTestbench::results() const {
    const Impl& m = *impl_;
    double read = 0, write = 0;
    Histogram read_latency;
    PcCounters banks;
    for (const HbmController* c : m.measured) {
        read += c->measured_read_bytes();
        write += c->measured_write_bytes();
        read_latency.merge(c->read_latency());
        PcCounters b = c->bank_counters();
        banks.activates += b.activates;
        banks.refreshes += b.refreshes;
        banks.reads += b.reads;
        banks.writes += b.writes;
    }
    double window_ns = cfg_.duration.ns - cfg_.warmup.ns;
    auto pick = [](const nlohmann::json& s) {
        nlohmann::json j = nlohmann::json::object();
        for (const char* k : {"mean", "p50", "p99", "max"})
            j[k] = s.contains(k) ? s[k] : nlohmann::json(nullptr);
        return j;
    };
    uint64_t accesses = banks.reads + banks.writes;
    return {{"path", cfg_.path == TrafficPath::Hbm ? "hbm" : "dma"},
            {"bandwidth_gbs", (read + write) / window_ns},
            {"read_bandwidth_gbs", read / window_ns},
            {"write_bandwidth_gbs", write / window_ns},
            {"peak_gbs", m.peak_gbs},
            {"read_latency_ns", pick(read_latency.summary())},
            {"issue_latency_ns", pick(m.tally.issue_latency.summary())},
            {"requests", m.tally.requests},
            {"row_hit_rate", m.banked && accesses ? nlohmann::json(1.0 - double(banks.activates) / double(accesses))
                                                  : nlohmann::json(nullptr)},
            {"refreshes", banks.refreshes}};
}

std::string TrafficTestbench::summary() const {
    auto r = results();
    auto num = [](const nlohmann::json& v) { return v.is_number() ? v.get<double>() : 0.0; };
    return fmt::format("traffic ({} path): {:.1f} GB/s of {:.1f} peak (read {:.1f}, write {:.1f}); read latency "
                       "p50 {:.1f} / p99 {:.1f} ns from acceptance, issue latency p99 {:.1f} ns; {} requests; "
                       "row hit rate {}; {} refreshes",
                       r["path"].get<std::string>(), num(r["bandwidth_gbs"]), num(r["peak_gbs"]),
                       num(r["read_bandwidth_gbs"]), num(r["write_bandwidth_gbs"]), num(r["read_latency_ns"]["p50"]),
                       num(r["read_latency_ns"]["p99"]), num(r["issue_latency_ns"]["p99"]),
                       r["requests"].get<uint64_t>(),
                       r["row_hit_rate"].is_null() ? std::string("n/a")
                                                   : fmt::format("{:.3f}", r["row_hit_rate"].get<double>()),
                       r["refreshes"].get<uint64_t>());
}

} // namespace nctlm
