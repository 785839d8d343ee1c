// Simulator speed (issue 2, item 7): host wall-clock per burst of
//   (a) a bare SystemC TLM-2.0 AT loop: initiator -> target, 4 phases (BEGIN_REQ, END_REQ,
//       BEGIN_RESP, END_RESP) through peq_with_cb_and_phase on both sides, pooled payloads,
//       several bursts outstanding; the target accepts each request on the return path (END_REQ
//       annotated with its delay) so the initiator never waits on an END_REQ event: the cheapest
//       AT model of the same traffic (the floor), and
//   (b) the full nctlm DMA -> NoC -> HBM path of a platform file (default trn1.yaml): both tiles
//       keep descriptors posted on all their DMA queues, each descriptor cut into bursts.
// Both set-ups are elaborated together (SystemC elaborates once per process); one controller
// thread runs them in turn inside a single sc_start and times each phase with steady_clock, so
// kernel start-up is outside both figures. Each phase is repeated; the fastest and the median are
// reported: this is a shared machine, and the minimum is the figure least disturbed by other load.
#include "models/common/errors.h"
#include "models/checker/bind.h"
#include "models/common/sim.h"
#include "models/common/stats.h"
#include "models/common/units.h"
#include "platforms/platform.h"
#include "platforms/platform_config.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fmt/format.h>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <systemc>
#include <tlm>
#include <tlm_utils/peq_with_cb_and_phase.h>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <vector>

#ifndef NCTLM_SOURCE_DIR
#define NCTLM_SOURCE_DIR "."
#endif

namespace {

using namespace nctlm;
using clock_type = std::chrono::steady_clock;

struct Options {
    uint64_t bursts = 200000;
    uint32_t reps = 3;
    uint32_t window = 32;           // bare loop: bursts outstanding; full path: descriptors per tile
    uint64_t descriptor_bytes = 32 * 1024;
    std::string platform = std::string(NCTLM_SOURCE_DIR) + "/configs/platforms/trn1.yaml";
    std::vector<std::string> overrides;
    std::string stats_json;  // the platform's stats after the run: lets a model change be checked
                             // for identical timing on a heavy load
    std::string only;        // "bare" or "full": run one phase (e.g. under callgrind, to count
                             // instructions per burst of each apart; no ratio is printed then)
};

// ---- (a) the bare AT loop ----------------------------------------------------------------------

struct NoExt : tlm::tlm_extension<NoExt> {
    tlm_extension_base* clone() const override { return new NoExt(*this); }
    void copy_from(const tlm_extension_base&) override {}
};

// Accepts a request after `accept` (END_REQ), answers it `latency` later (BEGIN_RESP).
class BareTarget : public sc_core::sc_module {
public:
    tlm_utils::simple_target_socket<BareTarget> socket;

    BareTarget(sc_core::sc_module_name name, sc_core::sc_time accept, sc_core::sc_time latency)
        : sc_module(name), socket("socket"), peq_(this, &BareTarget::step), accept_(accept), latency_(latency) {
        socket.register_nb_transport_fw(this, &BareTarget::nb_transport_fw);
    }

private:
    // END_REQ on the return path, `accept` after the request; BEGIN_RESP `latency` after that.
    tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload& p, tlm::tlm_phase& phase, sc_core::sc_time& delay) {
        if (phase == tlm::END_RESP)
            return tlm::TLM_COMPLETED;
        delay += accept_;
        peq_.notify(p, tlm::BEGIN_RESP, delay + latency_);
        phase = tlm::END_REQ;
        return tlm::TLM_UPDATED;
    }
    void step(tlm::tlm_generic_payload& p, const tlm::tlm_phase&) {
        tlm::tlm_phase ph = tlm::BEGIN_RESP;
        sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
        p.set_response_status(tlm::TLM_OK_RESPONSE);
        socket->nb_transport_bw(p, ph, delay);
    }

    tlm_utils::peq_with_cb_and_phase<BareTarget> peq_;
    sc_core::sc_time accept_, latency_;
};

// Issues `bursts` reads, at most `window` outstanding. Request exclusion without an END_REQ event:
// the next BEGIN_REQ is annotated to start at the previous one's END_REQ time.
class BareInitiator : public sc_core::sc_module {
public:
    tlm_utils::simple_initiator_socket<BareInitiator> socket;
    sc_core::sc_event start, done;

    SC_HAS_PROCESS(BareInitiator);
    BareInitiator(sc_core::sc_module_name name, uint64_t bursts, uint32_t window, uint32_t burst_bytes)
        : sc_module(name), socket("socket"), peq_(this, &BareInitiator::response), bursts_(bursts), window_(window),
          burst_bytes_(burst_bytes) {
        socket.register_nb_transport_bw(this, &BareInitiator::nb_transport_bw);
        SC_THREAD(run);
    }

private:
    void run() {
        while (true) {
            sc_core::wait(start);
            completed_ = 0;
            for (uint64_t i = 0; i < bursts_; ++i) {
                while (outstanding_ >= window_)
                    sc_core::wait(slot_free_);
                tlm::tlm_generic_payload* p = pool_.acquire();
                p->set_command(tlm::TLM_READ_COMMAND);
                p->set_address(i * burst_bytes_);
                p->set_data_length(burst_bytes_);
                p->set_streaming_width(burst_bytes_);
                p->set_data_ptr(nullptr);
                p->set_byte_enable_ptr(nullptr);
                ++outstanding_;
                tlm::tlm_phase phase = tlm::BEGIN_REQ;
                sc_core::sc_time now = sc_core::sc_time_stamp();
                sc_core::sc_time delay = free_at_ > now ? free_at_ - now : sc_core::SC_ZERO_TIME;
                socket->nb_transport_fw(*p, phase, delay);  // TLM_UPDATED, END_REQ after `delay`
                free_at_ = now + delay;
            }
        }
    }
    tlm::tlm_sync_enum nb_transport_bw(tlm::tlm_generic_payload& p, tlm::tlm_phase& phase, sc_core::sc_time& delay) {
        peq_.notify(p, phase, delay);  // BEGIN_RESP
        return tlm::TLM_ACCEPTED;
    }
    void response(tlm::tlm_generic_payload& p, const tlm::tlm_phase&) {
        tlm::tlm_phase phase = tlm::END_RESP;
        sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
        socket->nb_transport_fw(p, phase, delay);
        p.release();
        --outstanding_;
        slot_free_.notify();  // immediate: the issuing thread runs in this evaluation phase
        if (++completed_ == bursts_)
            done.notify(sc_core::SC_ZERO_TIME);
    }

    tlm_utils::peq_with_cb_and_phase<BareInitiator> peq_;
    PayloadPool<NoExt> pool_;
    sc_core::sc_event slot_free_;
    sc_core::sc_time free_at_;  // the last request's END_REQ
    uint64_t bursts_, completed_ = 0;
    uint32_t window_, outstanding_ = 0;
    uint32_t burst_bytes_;
};

// ---- (b) traffic on the full platform ----------------------------------------------------------

// Keeps `window` descriptors posted on one tile's DMA (spread over its queues), re-posting each
// as it completes, until `descriptors` have completed. Reads sweep the tile's local stack.
class TileFeeder {
public:
    TileFeeder(Platform& p, uint32_t tile, uint32_t window, uint64_t descriptor_bytes)
        : platform_(p), tile_(tile), bytes_(descriptor_bytes), slots_(window),
          base_(p.stack_address(p.local_stack(tile), 0)),
          span_(std::min<uint64_t>(p.config.hbm.stack_capacity, 1ull << 30) / descriptor_bytes) {
        for (uint32_t i = 0; i < window; ++i) {
            slots_[i].bytes = bytes_;
            slots_[i].queue = i % p.config.dma.queues;
            slots_[i].on_complete = [this](DmaDescriptor& d) { completed(d); };
        }
    }
    void start(uint64_t descriptors, sc_core::sc_event* all_done, uint32_t* feeders_left) {
        to_post_ = descriptors;
        left_ = descriptors;
        all_done_ = all_done;
        feeders_left_ = feeders_left;
        for (auto& d : slots_)
            post(d);
    }

private:
    void post(DmaDescriptor& d) {
        if (to_post_ == 0)
            return;
        --to_post_;
        d.address = base_ + (next_++ % span_) * bytes_;
        platform_.tiles[tile_].pe.post_dma(d);
    }
    void completed(DmaDescriptor& d) {
        if (d.failed)
            return;  // sim_error() has stopped the run
        post(d);
        if (--left_ == 0 && --*feeders_left_ == 0)
            all_done_->notify(sc_core::SC_ZERO_TIME);
    }

    Platform& platform_;
    uint32_t tile_;
    uint64_t bytes_;
    std::vector<DmaDescriptor> slots_;
    uint64_t base_, span_, next_ = 0, to_post_ = 0, left_ = 0;
    sc_core::sc_event* all_done_ = nullptr;
    uint32_t* feeders_left_ = nullptr;
};

// This thread's CPU time: unlike wall-clock, not inflated while other processes hold the core.
double cpu_seconds() {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

struct Phase {
    double best_s = 1e300, best_cpu_s = 1e300;
    std::vector<double> runs_s;  // every rep's wall-clock
    uint64_t bursts = 0;
    uint64_t deltas = 0;
    double simulated_ns = 0;
};

// Runs the bare loop and the full path in turn, `reps` times, timing each.
class Controller : public sc_core::sc_module {
public:
    SC_HAS_PROCESS(Controller);
    Controller(sc_core::sc_module_name name, const Options& o, BareInitiator& bare, Platform& platform,
               std::vector<TileFeeder>& feeders, uint64_t descriptors_per_tile, uint64_t bursts_per_descriptor)
        : sc_module(name), o_(o), bare_(bare), platform_(platform), feeders_(feeders),
          descriptors_per_tile_(descriptors_per_tile), bursts_per_descriptor_(bursts_per_descriptor) {
        SC_THREAD(run);
    }
    Phase bare, full;

private:
    template <class Start> void timed(Phase& ph, uint64_t bursts, sc_core::sc_event& done, Start start_phase) {
        uint64_t deltas = sc_core::sc_delta_count();
        double t0_ns = now_ns();
        auto t0 = clock_type::now();
        double c0 = cpu_seconds();
        start_phase();
        sc_core::wait(done);
        double s = std::chrono::duration<double>(clock_type::now() - t0).count();
        ph.runs_s.push_back(s);
        ph.best_cpu_s = std::min(ph.best_cpu_s, cpu_seconds() - c0);
        if (s < ph.best_s) {
            ph.best_s = s;
            ph.deltas = sc_core::sc_delta_count() - deltas;
            ph.simulated_ns = now_ns() - t0_ns;
        }
        ph.bursts = bursts;
    }
    void run() {
        for (uint32_t r = 0; r < o_.reps; ++r) {
            if (o_.only != "full")
                timed(bare, o_.bursts, bare_.done, [this] { bare_.start.notify(sc_core::SC_ZERO_TIME); });
            if (o_.only == "bare")
                continue;
            double noc_before = stats().value(std::string(platform_.noc.name()) + ".bursts");
            timed(full, 0, full_done_, [this] {
                feeders_left_ = uint32_t(feeders_.size());
                for (auto& f : feeders_)
                    f.start(descriptors_per_tile_, &full_done_, &feeders_left_);
            });
            full.bursts = uint64_t(stats().value(std::string(platform_.noc.name()) + ".bursts") - noc_before);
            if (full.bursts != descriptors_per_tile_ * feeders_.size() * bursts_per_descriptor_)
                sim_error(fmt::format("the full path moved {} bursts, expected {}", full.bursts,
                                      descriptors_per_tile_ * feeders_.size() * bursts_per_descriptor_));
        }
        sc_core::sc_stop();
    }

    const Options& o_;
    BareInitiator& bare_;
    Platform& platform_;
    std::vector<TileFeeder>& feeders_;
    uint64_t descriptors_per_tile_, bursts_per_descriptor_;
    sc_core::sc_event full_done_;
    uint32_t feeders_left_ = 0;
};

[[noreturn]] void usage(int status) {
    std::fprintf(status ? stderr : stdout,
                 "usage: nctlm_bench [--bursts N] [--reps N] [--window N] [--descriptor-bytes SIZE]\n"
                 "                   [--platform FILE] [--set key=value]... [--stats-json FILE]\n"
                 "                   [--only bare|full]\n"
                 "Host wall-clock ns per burst: a bare SystemC AT loop vs the nctlm DMA->NoC->HBM path.\n");
    std::exit(status);
}

Options parse(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc)
                usage(2);
            return argv[++i];
        };
        if (a == "--bursts")
            o.bursts = std::stoull(value());
        else if (a == "--reps")
            o.reps = uint32_t(std::stoul(value()));
        else if (a == "--window")
            o.window = uint32_t(std::stoul(value()));
        else if (a == "--descriptor-bytes")
            o.descriptor_bytes = parse_bytes(value());
        else if (a == "--platform" || a == "-p")
            o.platform = value();
        else if (a == "--stats-json")
            o.stats_json = value();
        else if (a == "--only")
            o.only = value();
        else if (a == "--set")
            o.overrides.push_back(value());
        else if (a == "--help" || a == "-h")
            usage(0);
        else
            usage(2);
    }
    if (o.bursts == 0 || o.reps == 0 || o.window == 0 || o.descriptor_bytes == 0 ||
        !(o.only.empty() || o.only == "bare" || o.only == "full"))
        usage(2);
    return o;
}

} // namespace

int sc_main(int argc, char** argv) {
    Options o = parse(argc, argv);
    ConfigTree tree = ConfigTree::from_file(o.platform);
    for (auto& s : o.overrides)
        tree.set(s);
    PlatformConfig cfg = PlatformConfig::load(tree);
    tree.check_sections(PlatformConfig::sections());

    const uint64_t burst = cfg.dma.burst_size;
    if (o.descriptor_bytes % burst != 0) {
        fmt::print(stderr, "--descriptor-bytes must be a multiple of dma.burst_size ({} B)\n", burst);
        return 2;
    }
    const uint64_t per_descriptor = o.descriptor_bytes / burst;
    const uint32_t tiles = cfg.platform.tiles;
    // Round the burst count to whole descriptors on every tile; the bare loop runs the same count.
    const uint64_t descriptors_per_tile = std::max<uint64_t>(1, o.bursts / (per_descriptor * tiles));
    o.bursts = descriptors_per_tile * per_descriptor * tiles;

    init_kernel();
    // The bare loop's timing echoes the platform's (a request header on one link; controller
    // latency plus one burst on a pseudo-channel), so both runs cover similar simulated spans.
    BareTarget target("bare_target", to_sc(cfg.noc.link_bandwidth.transfer(double(cfg.noc.request_bytes))),
                      to_sc(Duration(cfg.hbm.controller_latency.ns + cfg.hbm.pc_bandwidth.transfer(double(burst)).ns)));
    BareInitiator initiator("bare_initiator", o.bursts, o.window, uint32_t(burst));
    nctlm::bind(initiator.socket, target.socket, "bare");

    Platform top("top", cfg);
    std::vector<TileFeeder> feeders;
    feeders.reserve(tiles);
    for (uint32_t t = 0; t < tiles; ++t)
        feeders.emplace_back(top, t, o.window, o.descriptor_bytes);
    Controller controller("controller", o, initiator, top, feeders, descriptors_per_tile, per_descriptor);

    sc_core::sc_start();
    if (!sim_errors().empty() || !top.outstanding_report().empty()) {
        for (auto& e : sim_errors())
            fmt::print(stderr, "error: {}\n", e);
        for (auto& s : top.outstanding_report())
            fmt::print(stderr, "still in flight: {}\n", s);
        return 1;
    }

    const Phase &b = controller.bare, &f = controller.full;
    if (!o.only.empty()) {
        const Phase& ph = o.only == "bare" ? b : f;
        fmt::print("{} only: {} bursts, {:.1f} ns/burst (host wall-clock, best of {})\n", o.only, ph.bursts,
                   ph.best_s * 1e9 / double(ph.bursts), o.reps);
        return 0;
    }
    auto per_burst = [](double s, const Phase& ph) { return s * 1e9 / double(ph.bursts); };
    double ns_bare = per_burst(b.best_s, b), ns_full = per_burst(f.best_s, f);
    double cpu_bare = per_burst(b.best_cpu_s, b), cpu_full = per_burst(f.best_cpu_s, f);
    double ratio = ns_full / ns_bare;
    auto median = [](std::vector<double> v) {
        std::sort(v.begin(), v.end());
        return v.empty() ? 0.0 : v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
    };
    double med_bare = per_burst(median(b.runs_s), b), med_full = per_burst(median(f.runs_s), f);
    fmt::print("simulator speed: {} bursts of {} B per run, best of {} runs each (host wall-clock; CPU time in "
               "brackets)\n",
               o.bursts, burst, o.reps);
    fmt::print("  bare SystemC AT loop, 4 phases, {} outstanding:   {:7.1f} ns/burst [{:7.1f}]  {:.2f} deltas/burst, "
               "{:.1f} us simulated\n",
               o.window, ns_bare, cpu_bare, double(b.deltas) / double(b.bursts), b.simulated_ns / 1e3);
    fmt::print("  nctlm DMA->NoC->HBM, {} x {} tiles, {} B descr.: {:7.1f} ns/burst [{:7.1f}]  {:.2f} deltas/burst, "
               "{:.1f} us simulated\n",
               cfg.platform.name, tiles, o.descriptor_bytes, ns_full, cpu_full, double(f.deltas) / double(f.bursts),
               f.simulated_ns / 1e3);
    fmt::print("  ratio full / bare: {:.2f} [{:.2f}], median {:.2f} (target <= 2.5)\n", ratio, cpu_full / cpu_bare,
               med_full / med_bare);
    nlohmann::json j = {{"platform", cfg.platform.name},
                        {"bursts", o.bursts},
                        {"burst_bytes", burst},
                        {"descriptor_bytes", o.descriptor_bytes},
                        {"reps", o.reps},
                        {"ns_per_burst_bare", ns_bare},
                        {"ns_per_burst_full", ns_full},
                        {"ratio", ratio},
                        {"ns_per_burst_bare_median", med_bare},
                        {"ns_per_burst_full_median", med_full},
                        {"ratio_median", med_full / med_bare},
                        {"cpu_ns_per_burst_bare", cpu_bare},
                        {"cpu_ns_per_burst_full", cpu_full},
                        {"cpu_ratio", cpu_full / cpu_bare}};
    if (!o.stats_json.empty()) {
        std::ofstream out(o.stats_json);
        out << nlohmann::json{{"simulated_ns", now_ns()}, {"stats", stats().to_json()}}.dump(1) << "\n";
    }
    fmt::print("{}\n", j.dump());
    return 0;
}
