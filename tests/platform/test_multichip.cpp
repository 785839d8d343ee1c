// Multi-chip platforms: a DMA's request for another chip's address crosses NeuronLink (routed over
// the chips between, both ways), the data really lands in that chip's HBM, a full link withholds
// END_REQ until a receive slot frees, the loosely-timed path agrees with AT on lone transfers, and
// the collective testbench: bus bandwidth from the link parameters, the closed form's bytes per
// link, the public shipped platforms at 2/4/8/16 ranks, and bad input.
#include "models/analytic/collective_model.h"
#include "models/checker/bind.h"
#include "models/common/sim.h"
#include "models/common/stats.h"
#include "models/link/neuron_link.h"
#include "platforms/platform.h"
#include "tests/support.h"

#include <fmt/format.h>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

using namespace nctlm;

namespace {

PlatformConfig four_chips(const std::vector<std::string>& sets = {}) {
    ConfigTree t = ConfigTree::from_file(test::platform("tiny"));
    t.set("platform.chips=4");
    t.set("link.torus_width=2");
    for (auto& s : sets)
        t.set(s);
    return PlatformConfig::load(t);
}

// One descriptor from chip 0, tile 0 to `address`; returns its completion time (ns).
double transfer(Platform& p, uint64_t address, uint64_t bytes, bool write, std::vector<unsigned char>* data = nullptr) {
    static DmaDescriptor d;
    d = DmaDescriptor{};
    d.address = address;
    d.bytes = bytes;
    d.write = write;
    d.data = data ? data->data() : nullptr;
    double done = -1;
    d.on_complete = [&done](DmaDescriptor&) { done = now_ns(); };
    sc_core::sc_spawn([&] { p.tiles[0].dma.post(d); });
    sc_core::sc_start();
    EXPECT_FALSE(d.failed) << d.error;
    return done;
}

} // namespace

TEST(MultiChip, ARemoteReadCrossesTheRoutesLinksBothWays) {
    init_kernel();
    PlatformConfig cfg = four_chips();
    Platform p("top", cfg);
    ASSERT_EQ(p.chips(), 4u);
    // Chip 3 is (1, 1): x then y, two links each way.
    const uint64_t bytes = 4096, base = p.stack_address(3, 1, 0);
    double t = transfer(p, base, bytes, false);
    ASSERT_GT(t, 0);
    sc_core::sc_stop();
    auto bytes_on = [](const std::string& link) { return stats().value("top." + link + ".bytes"); };
    // Request headers out over link0_x a->b and link1_y a->b; data back over link1_y b->a, link0_x b->a.
    EXPECT_GT(bytes_on("link0_x.a_to_b"), 0);
    EXPECT_GT(bytes_on("link1_y.a_to_b"), 0);
    EXPECT_GE(bytes_on("link1_y.b_to_a"), bytes);
    EXPECT_GE(bytes_on("link0_x.b_to_a"), bytes);
    EXPECT_EQ(bytes_on("link0_y.a_to_b") + bytes_on("link2_x.a_to_b"), 0) << "off the dimension-ordered route";
    EXPECT_GT(stats().value("top.chip3.hbm1.bursts"), 0);
    // Four link traversals of 200 ns each on top of the on-chip path.
    EXPECT_GT(t, 4 * cfg.link.latency.ns);
}

TEST(MultiChip, AWriteLandsInTheOtherChipsMemoryAndReadsBack) {
    init_kernel();
    PlatformConfig cfg = four_chips();
    Platform p("top", cfg);
    std::vector<unsigned char> out(8192), in(8192, 0);
    for (size_t i = 0; i < out.size(); ++i)
        out[i] = uint8_t(i * 7 + 3);
    const uint64_t at = p.stack_address(2, 0, 1 << 20);
    sc_core::sc_spawn([&] {
        static DmaDescriptor w, r;
        w = DmaDescriptor{};
        w.address = at, w.bytes = out.size(), w.write = true, w.data = out.data();
        sc_core::sc_event done;
        w.on_complete = [&](DmaDescriptor&) { done.notify(sc_core::SC_ZERO_TIME); };
        p.tiles[1].dma.post(w);
        sc_core::wait(done);
        r = DmaDescriptor{};
        r.address = at, r.bytes = in.size(), r.write = false, r.data = in.data();
        r.on_complete = [&](DmaDescriptor&) {};
        p.chip(1).tiles[0].dma.post(r);  // read back from a third chip
    });
    sc_core::sc_start();
    EXPECT_EQ(in, out);
    std::vector<unsigned char> stored(out.size());
    p.chip(2).hbm[0]->memory().read(1 << 20, stored.data(), stored.size());
    EXPECT_EQ(stored, out) << "the data is in chip 2's stack 0";
    p.chip(0).hbm[0]->memory().read(1 << 20, stored.data(), stored.size());
    EXPECT_NE(stored, out) << "not in chip 0's";
}

TEST(MultiChip, AnAddressOnNoChipIsAnAddressError) {
    init_kernel();
    Platform p("top", four_chips());
    static DmaDescriptor d;
    d.address = uint64_t(4) << 44, d.bytes = 1024, d.on_complete = [](DmaDescriptor&) {};
    sc_core::sc_spawn([&] { p.tiles[0].dma.post(d); });
    sc_core::sc_start();
    EXPECT_TRUE(d.failed);
    EXPECT_NE(d.error.find("address"), std::string::npos) << d.error;
}

namespace {

// Sends one-hop requests into a link's end a; the far side (to_b) accepts only when told.
struct LinkBench : sc_core::sc_module {
    tlm_utils::simple_initiator_socket<LinkBench> near;
    tlm_utils::simple_target_socket<LinkBench> far;
    struct Mm : tlm::tlm_mm_interface {
        void free(tlm::tlm_generic_payload*) override {}
    } mm;
    std::vector<std::unique_ptr<tlm::tlm_generic_payload>> p;
    std::vector<double> end_req, arrived;
    std::vector<tlm::tlm_generic_payload*> held;
    bool hold_far = true;
    sc_core::sc_event end_req_event;
    unsigned char data[2048] = {};
    SC_HAS_PROCESS(LinkBench);
    explicit LinkBench(sc_core::sc_module_name n) : sc_module(n), near("near"), far("far") {
        near.register_nb_transport_bw(this, &LinkBench::bw);
        far.register_nb_transport_fw(this, &LinkBench::fw);
    }
    tlm::tlm_sync_enum bw(tlm::tlm_generic_payload&, tlm::tlm_phase& ph, sc_core::sc_time& d) {
        if (ph == tlm::END_REQ) {
            end_req.push_back(now_ns() + ns(d));
            end_req_event.notify(sc_core::SC_ZERO_TIME);
        }
        return tlm::TLM_ACCEPTED;
    }
    tlm::tlm_sync_enum fw(tlm::tlm_generic_payload& q, tlm::tlm_phase& ph, sc_core::sc_time&) {
        if (ph != tlm::BEGIN_REQ)
            return tlm::TLM_COMPLETED;
        arrived.push_back(now_ns());
        if (hold_far) {
            held.push_back(&q);
            return tlm::TLM_ACCEPTED;  // a full far chip: its END_REQ comes later
        }
        ph = tlm::END_REQ;
        return tlm::TLM_UPDATED;
    }
    void release_one() {  // the far chip accepts the oldest request it holds
        tlm::tlm_generic_payload* q = held.front();
        held.erase(held.begin());
        tlm::tlm_phase ph = tlm::END_REQ;
        sc_core::sc_time d = sc_core::SC_ZERO_TIME;
        far->nb_transport_bw(*q, ph, d);
    }
    void send(size_t n) {
        ChipTopology t(2, ChipTopologyKind::Ring, 2);
        for (size_t i = 0; i < n; ++i) {
            auto& q = p.emplace_back(std::make_unique<tlm::tlm_generic_payload>(&mm));
            q->acquire();
            q->set_command(tlm::TLM_WRITE_COMMAND);
            q->set_address(uint64_t(1) << 44);
            q->set_data_ptr(data);
            q->set_data_length(2048);
            q->set_streaming_width(2048);
            auto* x = new TransferExt;
            auto* r = new LinkRouteExt;
            r->route = t.route(0, 1);
            q->set_extension(x);
            q->set_extension(r);
            tlm::tlm_phase ph = tlm::BEGIN_REQ;
            sc_core::sc_time d = sc_core::SC_ZERO_TIME;
            if (near->nb_transport_fw(*q, ph, d) == tlm::TLM_UPDATED) {
                end_req.push_back(now_ns() + ns(d));
                sc_core::wait(d);
            } else {
                sc_core::wait(end_req_event);
            }
        }
    }
};

} // namespace

// The link's flow control: with `credits` receive slots and a far chip that accepts nothing, the
// first `credits` requests are accepted as the wire takes them and the next waits unaccepted
// (END_REQ withheld) until the far chip takes one; then it goes at once.
TEST(NeuronLinkFlowControl, AFullLinkWithholdsEndReqUntilASlotFrees) {
    init_kernel();
    LinkConfig cfg;
    cfg.wire_bandwidth = Bandwidth{64e9};
    cfg.latency = Duration(100);
    cfg.credits = 3;
    cfg.request_bytes = 64;
    NeuronLink link("link", cfg, 2);
    LinkBench bench("bench");
    nctlm::bind(bench.near, link.from_a, "bench_to_link");
    nctlm::bind(link.to_b, bench.far, "link_to_bench");
    // The other direction's sockets, bound to a bench that sends nothing.
    LinkBench other("other");
    nctlm::bind(other.near, link.from_b, "other_to_link");
    nctlm::bind(link.to_a, other.far, "link_to_other");
    sc_core::sc_spawn([&] { bench.send(5); });
    sc_core::sc_spawn([&] {
        sc_core::wait(5, sc_core::SC_US);
        bench.release_one();
    });
    sc_core::sc_start(20, sc_core::SC_US);
    const double wire = (2048 + 64) / 64.0;  // ns per request on the wire
    ASSERT_GE(bench.end_req.size(), 4u);
    for (int i = 0; i < 3; ++i)
        EXPECT_NEAR(bench.end_req[size_t(i)], (i + 1) * wire, 1e-6) << "request " << i;
    EXPECT_NEAR(bench.end_req[3], 5000 + wire, 1e-6) << "the fourth waits for the far chip's END_REQ";
    EXPECT_EQ(bench.end_req.size(), 4u) << "the fifth still waits: only one slot freed";
    // Requests reach the far chip one at a time per channel: the second only once it took the first.
    ASSERT_EQ(bench.arrived.size(), 2u);
    EXPECT_NEAR(bench.arrived[0], wire + 100, 1e-6);
    EXPECT_NEAR(bench.arrived[1], 5000, 1e-6);
}


// A tensor-parallel op graph over two chips (docs/models.md, placement): the MLP block of
// configs/graphs/mlp_tp2.json with its 2 ranks on core 0 of chips 0 and 1 of a trn2-16 runs end to
// end, and its all_reduce's peer reads cross the NeuronLink between the chips (both directions
// carry at least what one rank pulls from the other: S bytes for a 2-rank ring); on one chip of the
// same platform nothing crosses a link and every figure is trn2's.
TEST(GraphOverChips, TensorParallelMlpOverTwoChipsRunsOverNeuronLink) {
    std::ifstream in(test::source_path("configs/graphs/mlp_tp2.json"));
    nlohmann::json g = nlohmann::json::parse(in);
    auto run_graph = [&](const std::string& platform, const nlohmann::json& placement) {
        g["placement"] = placement;
        const std::string file = test::temp_file(g.dump(), ".json"), out = test::temp_file("", ".json");
        test::CliResult r = test::run_cli(fmt::format("run -p {} -t graph -w {} -o {}", platform, file, out));
        EXPECT_EQ(r.exit_code, 0) << platform << " " << placement.dump() << "\n" << r.err;
        std::ifstream o(out);
        return nlohmann::json::parse(o);
    };
    auto link_bytes = [](const nlohmann::json& report, const char* dir) {
        return report["stats"]["top"]["link0_x"][dir]["bytes"].get<double>();
    };
    const nlohmann::json two = run_graph("trn2-16", {{"tp", 2}, {"cores", {0, 0}}, {"chips", {0, 1}}});
    const nlohmann::json one = run_graph("trn2-16", {{"tp", 2}});
    const nlohmann::json ref = run_graph("trn2", {{"tp", 2}});
    ASSERT_TRUE(two["results"].contains("latency_ns")) << two["results"].dump();
    const nlohmann::json& c = two["results"]["collectives"][0];
    const double S = c["bytes"].get<double>();  // the whole tensor per rank
    EXPECT_EQ(S, 128 * 512 * 2);
    for (const char* dir : {"a_to_b", "b_to_a"}) {
        EXPECT_GE(link_bytes(two, dir), S) << dir;
        EXPECT_LT(link_bytes(two, dir), 2 * S) << dir << ": more than the collective's reads and their headers";
        EXPECT_EQ(link_bytes(one, dir), 0) << dir;
    }
    EXPECT_EQ(two["results"]["cores"][1]["chip"], 1);
    // Remote reads pay the link's latency and bandwidth: the collective is slower than on one chip.
    EXPECT_GT(c["time_ns"].get<double>(), one["results"]["collectives"][0]["time_ns"].get<double>());
    EXPECT_EQ(one["results"]["latency_ns"], ref["results"]["latency_ns"]);
    EXPECT_EQ(one["results"]["ops"], ref["results"]["ops"]);
}

TEST(GraphOverChips, BadChipPlacementExits2NamingTheKey) {
    std::ifstream in(test::source_path("configs/graphs/mlp_tp2.json"));
    nlohmann::json g = nlohmann::json::parse(in);
    struct Case {
        std::string platform;
        nlohmann::json placement;
        std::string words;
    };
    for (const Case& k : std::vector<Case>{
             {"trn2-16", {{"tp", 2}, {"cores", {0, 0}}, {"chips", {0, 16}}}, "/placement/chips/1: chip 16 but platform trn2-16 has 16 chips"},
             {"trn2", {{"tp", 2}, {"cores", {0, 0}}, {"chips", {0, 1}}}, "/placement/chips/1: chip 1 but platform trn2 has 1 chip"},
             {"trn2-16", {{"tp", 2}, {"cores", {0, 0}}, {"chips", {1, 1}}}, "/placement/cores/1: core 0 of chip 1 listed twice"},
             {"trn2-16", {{"tp", 2}, {"chips", {0, 1, 2}}}, "/placement/chips: 3 chips listed"},
         }) {
        g["placement"] = k.placement;
        const std::string file = test::temp_file(g.dump(), ".json");
        test::CliResult r = test::run_cli(fmt::format("run -p {} -t graph -w {}", k.platform, file));
        EXPECT_EQ(r.exit_code, 2) << k.placement.dump() << "\n" << r.err;
        EXPECT_NE(r.err.find(k.words), std::string::npos) << k.words << "\n" << r.err;
    }
}
