// The memory system that pushes back: flow control from a full HBM queue through the NoC to the
// initiator, any initiator's plain generic payload, the traffic testbench, GEMM efficiency under
// a slower HBM, and bad banked-model configs.
#include "models/common/sim.h"
#include "models/checker/bind.h"
#include "models/common/trace.h"
#include "models/hbm/hbm_controller.h"
#include "models/noc/noc.h"
#include "platforms/platform.h"
#include "tests/support.h"

#include <gtest/gtest.h>
#include <fmt/format.h>
#include <fstream>
#include <set>
#include <tlm_utils/simple_initiator_socket.h>

using namespace nctlm;

namespace {

// A user's own initiator: plain generic payloads (no extension, no memory manager), one request
// at a time on the socket as the base protocol wants, answers taken at once.
// The base protocol wants a memory manager on every nb_transport payload (the protocol checker,
// on every binding in the asan preset, refuses one without); the test owns its payloads, so the
// manager frees nothing.
struct TestOwnedPayloads : tlm::tlm_mm_interface {
    void free(tlm::tlm_generic_payload*) override {}
};
TestOwnedPayloads g_test_owned;

struct PlainInitiator : sc_core::sc_module {
    tlm_utils::simple_initiator_socket<PlainInitiator> socket;
    std::vector<double> end_req_ns, response_ns;
    sc_core::sc_event end_req, response;

    explicit PlainInitiator(sc_core::sc_module_name n) : sc_module(n), socket("socket") {
        socket.register_nb_transport_bw(this, &PlainInitiator::bw);
    }
    // Sends p; returns once the target accepted it (END_REQ), not when it answered.
    void send(tlm::tlm_generic_payload& p) {
        tlm::tlm_phase phase = tlm::BEGIN_REQ;
        sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
        if (!p.has_mm())
            p.set_mm(&g_test_owned);
        p.acquire();  // released when the response arrives
        tlm::tlm_sync_enum s = socket->nb_transport_fw(p, phase, delay);
        ASSERT_NE(s, tlm::TLM_COMPLETED) << p.get_response_string();
        if (s == tlm::TLM_ACCEPTED)
            sc_core::wait(end_req);
        end_req_ns.push_back(now_ns());
    }
    tlm::tlm_sync_enum bw(tlm::tlm_generic_payload& p, tlm::tlm_phase& phase, sc_core::sc_time&) {
        if (phase == tlm::END_REQ) {
            end_req.notify(sc_core::SC_ZERO_TIME);
            return tlm::TLM_ACCEPTED;
        }
        p.release();
        response_ns.push_back(now_ns());
        response.notify(sc_core::SC_ZERO_TIME);
        return tlm::TLM_COMPLETED;
    }
};

void fill(tlm::tlm_generic_payload& p, bool write, uint64_t address, unsigned char* data, uint32_t bytes) {
    p.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
    p.set_address(address);
    p.set_data_ptr(data);
    p.set_data_length(bytes);
    p.set_streaming_width(bytes);
    p.set_byte_enable_ptr(nullptr);
    p.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
}

nlohmann::json run_json(const std::string& args) {
    std::string out = test::temp_file("", ".json");
    test::CliResult r = test::run_cli(args + " --stats-json " + out);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::ifstream in(out);
    return nlohmann::json::parse(in);
}

std::string traffic(const std::string& sets) {
    return "run -p " + test::platform("trn1") + " -t traffic --set testbench.warmup=\"2 us\" "
           "--set testbench.duration=\"12 us\" " + sets;
}

// The initiator writes `bytes` at addr, then reads them back once the write is answered.
void write_then_read(PlainInitiator& init, tlm::tlm_generic_payload& w, tlm::tlm_generic_payload& r, uint64_t addr,
                     unsigned char* out, unsigned char* back, uint32_t bytes) {
    sc_core::sc_spawn([&, addr, out, back, bytes] {
        fill(w, true, addr, out, bytes);
        init.send(w);
        sc_core::wait(init.response);
        fill(r, false, addr, back, bytes);
        init.send(r);
    });
    sc_core::sc_start();
}

// A foreign initiator on the NoC's tile socket with every stack's controller behind it.
struct PlainNoc {
    AddressMap map;
    Noc noc;
    std::vector<std::unique_ptr<HbmController>> stacks;
    PlainInitiator init{"init"};
    explicit PlainNoc(const PlatformConfig& cfg) : map(cfg.hbm), noc("noc", cfg.noc, map, 1) {
        for (uint32_t s = 0; s < cfg.hbm.stacks; ++s) {
            stacks.push_back(std::make_unique<HbmController>(("hbm" + std::to_string(s)).c_str(), cfg.hbm, map, s));
            nctlm::bind(noc.stack_sockets, stacks.back()->socket, "noc_hbm" + std::to_string(s));
        }
        nctlm::bind(init.socket, noc.tile_sockets, "init_noc");
    }
};

} // namespace

TEST(BackPressure, AFullQueueDelaysEndReq) {
    init_kernel();
    // One PC, a read queue of 32 entries (1 KiB) and no ingress buffer: a second 1 KiB read to the
    // same PC cannot be accepted until the scheduler has taken the first.
    PlatformConfig cfg = test::load_platform("tiny", {"hbm.ingress_queue=0"});
    AddressMap map(cfg.hbm);
    HbmController hbm("hbm", cfg.hbm, map, 0);
    PlainInitiator init("init");
    nctlm::bind(init.socket, hbm.socket, "init_hbm");
    const uint32_t n = 4, bytes = 1024;
    uint64_t stride = cfg.hbm.interleave * cfg.hbm.pseudo_channels;  // always pseudo-channel 0
    std::vector<tlm::tlm_generic_payload> p(n);
    std::vector<std::vector<unsigned char>> buf(n, std::vector<unsigned char>(bytes));
    sc_core::sc_spawn([&] {
        for (uint32_t i = 0; i < n; ++i) {
            fill(p[i], false, i * stride * 64, buf[i].data(), bytes);
            init.send(p[i]);
        }
    });
    sc_core::sc_start();
    ASSERT_EQ(init.end_req_ns.size(), n);
    ASSERT_EQ(init.response_ns.size(), n);
    // The first is queued at once and scheduled at once (the PC is idle), which frees the queue for
    // the second; the third must wait until the scheduler takes the second, tRP + tRCD before the
    // column bus frees, and so on: each END_REQ is held back, none waits for a whole read.
    EXPECT_EQ(init.end_req_ns[0], 0.0);
    EXPECT_EQ(init.end_req_ns[1], 0.0);
    for (uint32_t i = 2; i < n; ++i) {
        EXPECT_GT(init.end_req_ns[i], init.end_req_ns[i - 1]) << "request " << i << " was accepted at once";
        EXPECT_LT(init.end_req_ns[i], init.response_ns[i - 1]) << "accepted only after its predecessor finished";
    }
    for (auto& q : p)
        EXPECT_EQ(q.get_response_status(), tlm::TLM_OK_RESPONSE);
}

TEST(PlainPayload, HbmControllerAnswersAForeignInitiator) {
    init_kernel();
    PlatformConfig cfg = test::load_platform("tiny");  // functional
    AddressMap map(cfg.hbm);
    HbmController hbm("hbm", cfg.hbm, map, 1);
    PlainInitiator init("init");
    nctlm::bind(init.socket, hbm.socket, "init_hbm");
    std::vector<unsigned char> out(512), back(512, 0);
    for (size_t i = 0; i < out.size(); ++i)
        out[i] = static_cast<unsigned char>(i * 13 + 1);
    tlm::tlm_generic_payload w, r;
    uint64_t addr = map.stack_base(1) + 4096 + 64;
    write_then_read(init, w, r, addr, out.data(), back.data(), 512);
    EXPECT_EQ(w.get_response_status(), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(r.get_response_status(), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(back, out);
    // A plain payload is answered with its last byte: cold bank, 16 accesses of 32 B in one bank group.
    DramTiming t = DramTiming::from(cfg.hbm);
    double read_done = init.response_ns[1] - init.end_req_ns[1];
    EXPECT_GE(read_done, t.front_end + t.rcd + t.cl + 16 * t.burst - 1e-9);
}

TEST(PlainPayload, NocCarriesAForeignInitiatorsPayloadAndRemovesItsExtension) {
    init_kernel();
    PlatformConfig cfg = test::load_platform("tiny");
    PlainNoc plain(cfg);
    const AddressMap& map = plain.map;
    PlainInitiator& init = plain.init;
    std::vector<unsigned char> out(2048), back(2048, 0);
    for (size_t i = 0; i < out.size(); ++i)
        out[i] = static_cast<unsigned char>(i ^ 0x5a);
    tlm::tlm_generic_payload w, r;
    uint64_t addr = map.interleaved_base() + 3 * 1024;  // through the stack-interleaved window
    write_then_read(init, w, r, addr, out.data(), back.data(), 1024);
    EXPECT_EQ(r.get_response_status(), tlm::TLM_OK_RESPONSE);
    EXPECT_TRUE(std::equal(out.begin(), out.begin() + 1024, back.begin()));
    EXPECT_EQ(w.get_extension<TransferExt>(), nullptr);
    EXPECT_EQ(r.get_extension<TransferExt>(), nullptr);
}

// A traced run with a foreign initiator: the NoC's and the HBM's spans carry what the payload
// says (command, bytes, address, pseudo-channel) and no flow (nothing to link it to).
void traced_plain_write_then_read(const std::vector<std::string>& sets) {
    init_kernel();
    trace().enable();
    PlatformConfig cfg = test::load_platform("tiny", sets);
    PlainNoc plain(cfg);
    const AddressMap& map = plain.map;
    PlainInitiator& init = plain.init;
    std::vector<unsigned char> out(1024, 7), back(1024, 0);
    tlm::tlm_generic_payload w, r;
    uint64_t addr = map.stack_base(1) + 2048;
    write_then_read(init, w, r, addr, out.data(), back.data(), 1024);
    ASSERT_EQ(r.get_response_status(), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(back, out);
    std::string file = test::temp_file("", ".json");
    trace().write(file);
    std::ifstream in(file);
    nlohmann::json j = nlohmann::json::parse(in);
    std::remove(file.c_str());
    std::map<std::string, std::string> process;  // pid -> name
    for (auto& e : j["traceEvents"])
        if (e["ph"] == "M" && e["name"] == "process_name")
            process[e["pid"].dump()] = e["args"]["name"];
    std::multiset<std::string> hbm_spans, noc_spans;
    for (auto& e : j["traceEvents"]) {
        if (e["ph"] != "X")
            continue;
        const nlohmann::json& a = e["args"];
        EXPECT_FALSE(a.contains("flow")) << e.dump();
        EXPECT_FALSE(a.contains("descriptor")) << e.dump();
        EXPECT_EQ(a.value("address", ""), fmt::format("0x{:x}", addr)) << e.dump();
        std::string p = process[e["pid"].dump()];
        if (p == "hbm1") {
            EXPECT_EQ(a["bytes"], 1024) << e.dump();
            EXPECT_TRUE(a.contains("pseudo_channel")) << e.dump();
            hbm_spans.insert(e["name"].get<std::string>());
        } else if (p == "noc") {
            noc_spans.insert(a["command"].get<std::string>() + ":" + e["name"].get<std::string>());
        }
    }
    // One write and one read at the PC; across the NoC a request and a response route each.
    EXPECT_EQ(hbm_spans, (std::multiset<std::string>{"write 1 KiB", "read 1 KiB"}));
    for (const char* hop : {"write:write data", "write:write ack", "read:read request", "read:read data 1 KiB"})
        EXPECT_TRUE(std::any_of(noc_spans.begin(), noc_spans.end(),
                                [&](const std::string& s) { return s.rfind(hop, 0) == 0; }))
            << "no NoC span " << hop;
}

TEST(PlainPayload, TracedBankedHbmAndNocNameWhatMoves) { traced_plain_write_then_read({}); }

TEST(PlainPayload, TracedPipeHbmAndNocNameWhatMoves) { traced_plain_write_then_read({"hbm.model=pipe"}); }

TEST(BackPressure, AcceptanceLatencyStaysBoundedWhileIssueLatencyGrows) {
    // Random 2 KiB reads: 64 outstanding fill the stack's queues; 1024 outstanding cannot all be
    // accepted, so they wait at the generator's socket instead of inside the controller.
    nlohmann::json small = run_json(traffic("--set testbench.pattern=random --set testbench.window=64"));
    nlohmann::json big = run_json(traffic("--set testbench.pattern=random --set testbench.window=1024"));
    double accept64 = small["results"]["read_latency_ns"]["p99"], accept1k = big["results"]["read_latency_ns"]["p99"];
    double issue64 = small["results"]["issue_latency_ns"]["mean"], issue1k = big["results"]["issue_latency_ns"]["mean"];
    EXPECT_LT(accept1k, 2.0 * accept64) << "latency inside the controller is bounded by its queues";
    // Little's law at the same throughput: 16 x the requests in flight, about 16 x the mean latency.
    EXPECT_GT(issue1k, 8.0 * issue64) << "the rest waits outside";
    // Bandwidth saturates: more outstanding requests buy nothing.
    EXPECT_NEAR(big["results"]["bandwidth_gbs"].get<double>(), small["results"]["bandwidth_gbs"].get<double>(),
                0.15 * small["results"]["bandwidth_gbs"].get<double>());
    auto& hbm = big["stats"]["traffic_hbm"];
    EXPECT_GT(hbm["pc0"]["read_queue"]["time_full_ns"].get<double>(), 0);
    // A 2 KiB read (64 entries) fills the 32-entry queue alone: every arrival found it empty.
    EXPECT_EQ(hbm["pc0"]["read_queue"]["occupancy"]["max"].get<double>(), 0.0)
        << hbm["pc0"]["read_queue"].dump();
}

TEST(BackPressure, AStalledStackStallsTheNocAndThenTheDma) {
    // Every tile streams through the DMA with tiny buffers: the stack port runs out of credits and
    // the tiles' requests wait unaccepted at the NoC.
    nlohmann::json j = run_json(traffic("--set testbench.path=dma --set testbench.window=64 "
                                        "--set hbm.ingress_queue=0 --set noc.port_buffer=4"));
    auto& port = j["stats"]["top"]["noc"]["stack0_port"];
    EXPECT_GT(port["time_full_ns"].get<double>(), 1000.0);
    EXPECT_GT(port["wait_ns"]["max"].get<double>(), 0.0);
    EXPECT_GT(j["results"]["bandwidth_gbs"].get<double>(), 0.0);
    EXPECT_EQ(j["sim"]["errors"].size(), 0u);
}

TEST(Traffic, SequentialReadsApproachThePeakAndRefreshTakesItsShare) {
    nlohmann::json j = run_json(traffic("--set testbench.window=64"));
    double bw = j["results"]["bandwidth_gbs"], peak = j["results"]["peak_gbs"];
    // tRFC / tREFI = 260 / 3900 of the time every PC refreshes.
    EXPECT_LT(bw, peak * (1 - 260.0 / 3900));
    EXPECT_GT(bw, 0.8 * peak);
    EXPECT_GT(j["results"]["refreshes"].get<double>(), 0.0);
    EXPECT_GT(j["results"]["row_hit_rate"].get<double>(), 0.9);
    nlohmann::json off = run_json(traffic("--set testbench.window=64 --set hbm.refresh=off"));
    EXPECT_GT(off["results"]["bandwidth_gbs"].get<double>(), bw);
}

TEST(Traffic, PipeModelIsTheAblationThatAcceptsEverything) {
    nlohmann::json banked = run_json(traffic("--set testbench.pattern=random --set testbench.request_bytes=\"64 B\" "
                                             "--set testbench.window=256"));
    nlohmann::json pipe = run_json(traffic("--set testbench.pattern=random --set testbench.request_bytes=\"64 B\" "
                                           "--set testbench.window=256 --set hbm.model=pipe"));
    // Random 64 B reads are activation-bound (tFAW) in the banked model; the pipe only sees bytes.
    EXPECT_GT(pipe["results"]["bandwidth_gbs"].get<double>(), 2.0 * banked["results"]["bandwidth_gbs"].get<double>());
    EXPECT_TRUE(pipe["results"]["row_hit_rate"].is_null());
}

TEST(Traffic, BadSettingsExitTwoWithTheKey) {
    test::CliResult r = test::run_cli(traffic("--set testbench.stack=9"));
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("testbench.stack"), std::string::npos) << r.err;
    r = test::run_cli(traffic("--set testbench.warmup=\"20 us\""));
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("warmup"), std::string::npos) << r.err;
    r = test::run_cli(traffic("--set testbench.pattern=zigzag"));
    EXPECT_EQ(r.exit_code, 2);
}

TEST(HbmConfigErrors, ImpossibleTimingsAndMapsExitTwoWithTheLocation) {
    test::CliResult r = test::run_cli("validate " + test::platform("trn1") + " --set hbm.t_ras=\"10 ns\"");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("t_ras"), std::string::npos) << r.err;
    std::ifstream in(test::platform("trn1"));
    std::string text((std::istreambuf_iterator<char>(in)), {});
    size_t at = text.find("bank_bits: 16-17");
    ASSERT_NE(at, std::string::npos);
    text.replace(at, 16, "bank_bits: 15-16");  // bit 15 already selects the bank group
    std::string path = test::temp_file(text);
    r = test::run_cli("validate " + path);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find(path + ":"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("bit 15"), std::string::npos) << r.err;
    r = test::run_cli("validate " + test::platform("trn1") + " --set hbm.read_queue=0");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("read_queue"), std::string::npos) << r.err;
}

TEST(GemmEfficiency, NeverAbove100PercentAndFallsWithHbmBandwidth) {
    double previous = 2;
    for (const char* bw : {"25.6 GB/s", "8 GB/s", "4 GB/s", "2 GB/s", "1 GB/s"}) {
        nlohmann::json j = run_json("run -p " + test::platform("trn1") + " -t gemm -w " +
                                    test::source_path("configs/workloads/gemm_32x3072x32.yaml") +
                                    " --set workload.tiles=8 --set hbm.pc_bandwidth=\"" + bw + "\"");
        double e = j["results"]["efficiency"];
        EXPECT_LE(e, 1.0) << bw;
        EXPECT_LE(e, previous + 1e-9) << bw;
        previous = e;
    }
    EXPECT_LT(previous, 0.2);
}
