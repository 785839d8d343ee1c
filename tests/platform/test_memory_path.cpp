// The memory path PE DMA -> NoC -> HBM on whole platforms: the oracles and the module behaviour.
#include "models/common/errors.h"
#include "models/checker/bind.h"
#include "models/common/sim.h"
#include "platforms/platform.h"
#include "tests/support.h"

#include <gtest/gtest.h>
#include <algorithm>
#include <fstream>
#include <numeric>
#include <tlm_utils/simple_target_socket.h>

using namespace nctlm;

namespace {

double result(const RunOutcome& r, const char* key) { return r.report["results"][key].get<double>(); }

DmaDescriptor transfer(uint64_t address, uint64_t bytes, bool write, uint32_t queue, unsigned char* data,
                       std::function<void(DmaDescriptor&)> done) {
    DmaDescriptor d;
    d.address = address;
    d.bytes = bytes;
    d.write = write;
    d.queue = queue;
    d.data = data;
    d.on_complete = std::move(done);
    return d;
}

} // namespace

// ---- the oracles on trn1 ----------------------------------------------------------------

TEST(Probe, LocalRead32KiBTakes141ns) {
    RunOutcome r = test::run_testbench("trn1", "probe");
    ASSERT_TRUE(r.errors.empty());
    EXPECT_NEAR(result(r, "latency_ns"), 141.0, 0.5);
}

namespace {
// One probe in its own process (a SystemC kernel elaborates once per process).
double probe_ns(const std::string& sets) {
    std::string out = test::temp_file("", ".json");
    test::CliResult r = test::run_cli("run -p " + test::platform("trn1") + " -t probe " + sets + " --stats-json " + out);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::ifstream in(out);
    return nlohmann::json::parse(in)["results"]["latency_ns"].get<double>();
}
} // namespace

TEST(Probe, LatencyFollowsTheParameters) {
    // +10 ns of CAS latency (14 -> 24 ns, whole 0.625 ns cycles), and 10 instead of 8 NoC cycles per
    // hop on 4 hops (+1 ns each).
    EXPECT_NEAR(probe_ns("--set hbm.t_cl=\"24 ns\" --set noc.hop_cycles=10"), probe_ns("") + 10 + 4 * 1.0, 0.01);
}

TEST(Probe, PipeModelAblationKeepsTheWave1Formula) {
    // The pipe: controller_latency stands for front end + tRCD + CL, then 2 KiB per PC at 25.6 GB/s.
    // The banked PC adds only the second bank group's start-up (its ACT is tRRD_S later).
    DramTiming t = DramTiming::from(test::load_platform("trn1").hbm);
    double pipe = probe_ns("--set hbm.model=pipe --set hbm.controller_latency=\"39 ns\"");
    double startup = probe_ns("") - (pipe - 39 + t.front_end + t.rcd + t.cl);
    EXPECT_GT(startup, 0);
    EXPECT_LT(startup, t.rrd_s + t.burst);
}

TEST(Probe, FasterPseudoChannelsMakeTheDmaDataPathTheLimit) {
    // At 51.2 GB/s per PC the 16 PCs deliver 32 KiB in 40 ns, faster than the DMA engines' 16 x 27.2 GB/s
    // (75.3 ns): the probe is then bounded by the DMA, not the HBM.
    RunOutcome r = test::run_testbench("trn1", "probe", {"hbm.pc_bandwidth=51.2 GB/s"});
    double dma_ns = 32768 / 435.2;
    EXPECT_GT(result(r, "latency_ns"), 141.0 - 80 + dma_ns - 1);
    EXPECT_LT(result(r, "latency_ns"), 141.0);
}

TEST(Probe, RemoteStackCostsOneRingHopEachWay) {
    // One more 4 ns hop each way; and the 16 request flits cross the narrower ring link (64 B at
    // 512 GB/s instead of 1024 GB/s): 16 x 0.0625 ns more before the last request arrives.
    EXPECT_NEAR(probe_ns("--set testbench.target=remote"), probe_ns("") + 2 * 4.0 + 16 * 0.0625, 0.01);
}

TEST(BackToBack, test_pe_dma_back_to_back_pipelining) {
    RunOutcome r = test::run_testbench("trn1", "b2b");
    ASSERT_TRUE(r.errors.empty());
    EXPECT_EQ(r.report["results"]["n"], 8);
    EXPECT_NEAR(result(r, "single_op_ns"), 141.0, 0.5);
    EXPECT_NEAR(result(r, "serial_ns"), 8 * result(r, "single_op_ns"), 1e-6);
    EXPECT_LT(result(r, "ratio"), 0.75);
    // The HBM pseudo-channels alone serialize: each PC's data bus carries 8 x 2 KiB (8 x 80 ns), and the
    // banked PCs open the next rows under the data, so the wall is that plus one read's fixed part,
    // no more than the first read's whole latency plus 7 data slots.
    EXPECT_GT(result(r, "sim_time_ns"), 8 * 80.0);
    EXPECT_LE(result(r, "sim_time_ns"), result(r, "single_op_ns") + 7 * 80.0 + 1e-9);
}

TEST(BackToBack, HoldingTheChannelForTheRoundTripSerializes) {
    RunOutcome r = test::run_testbench("trn1", "b2b", {"dma.channel_release=on_response"});
    ASSERT_TRUE(r.errors.empty());
    EXPECT_GE(result(r, "ratio"), 0.95);
    EXPECT_EQ(r.report["results"]["channel_release"], "on_response");
}

TEST(BackToBack, RequestsLeaveTheChannelClustered) {
    RunOutcome r = test::run_testbench("trn1", "b2b");
    double spread = result(r, "t_start_spread_ns"), single = result(r, "single_op_ns");
    EXPECT_GT(spread, 0.0);
    EXPECT_LT(spread, 0.5 * single) << "with on_accept the N requests must leave within a small window";
    EXPECT_LT(result(r, "ratio"), 0.75);
}

TEST(BackToBack, StatsAndEffectiveConfigAreReported) {
    RunOutcome r = test::run_testbench("trn1", "b2b", {"testbench.n=4"});
    EXPECT_EQ(r.report["config"]["dma"]["channel_release"], "on_accept");
    EXPECT_EQ(r.report["config"]["testbench"]["n"], 4);
    auto& hbm0 = r.report["stats"]["top"]["hbm0"];
    EXPECT_DOUBLE_EQ(hbm0["bytes_read"].get<double>(), 5 * 32768.0);  // single op + 4
    EXPECT_EQ(hbm0["pc0"]["read_queue"]["occupancy"]["count"], 5);  // one 2 KiB burst per read
    EXPECT_GT(hbm0["read_latency_ns"]["max"].get<double>(), 3 * 80.0);  // the last waited for three
    EXPECT_GT(hbm0["activates"].get<double>(), 0.0);
    EXPECT_GT(r.report["stats"]["top"]["tile0"]["dma"]["queue0"]["latency_ns"]["p99"].get<double>(), 141.0);
}

// ---- module behaviour on hand-built platforms ------------------------------------------

namespace {

// Runs `traffic` on a platform built in this process; returns after the simulation drains.
void simulate(Platform& p, std::function<void(Platform&)> traffic) {
    sc_core::sc_spawn([&] { traffic(p); }, "traffic");
    sc_core::sc_start();
}

} // namespace

TEST(HbmController, SamePseudoChannelRequestsSerializeInIssueOrder) {
    init_kernel();
    PlatformConfig cfg = test::load_platform("tiny", {"dma.queue_channels=4"});
    Platform p("top", cfg);
    // Addresses one full PC rotation apart all hit pseudo-channel 0 of stack 0.
    uint64_t stride = cfg.hbm.interleave * cfg.hbm.pseudo_channels;
    std::vector<DmaDescriptor> d(6);
    simulate(p, [&](Platform& plat) {
        for (size_t i = 0; i < d.size(); ++i) {
            d[i].address = i * stride;
            d[i].bytes = cfg.hbm.interleave;
            d[i].queue = 0;  // up to 4 channels work on the queue at once: only the PC serializes
            plat.tiles[0].pe.post_dma(d[i]);
        }
    });
    std::sort(d.begin(), d.end(), [](auto& a, auto& b) { return a.t_first_issue < b.t_first_issue; });
    double occupancy = cfg.hbm.pc_bandwidth.transfer(double(cfg.hbm.interleave)).ns;  // 1 KiB / 16 GB/s = 64 ns
    EXPECT_LT(d.back().t_first_issue - d.front().t_first_issue, occupancy) << "requests must overlap in flight";
    for (size_t i = 1; i < d.size(); ++i) {
        EXPECT_GT(d[i].t_done, d[i - 1].t_done) << "request " << i << " overtook its predecessor";
        EXPECT_NEAR(d[i].t_done - d[i - 1].t_done, occupancy, 0.01) << i;
    }
}

TEST(HbmController, DifferentPseudoChannelsOverlap) {
    init_kernel();
    PlatformConfig cfg = test::load_platform("tiny");
    Platform p("top", cfg);
    std::vector<DmaDescriptor> d(cfg.hbm.pseudo_channels);
    simulate(p, [&](Platform& plat) {
        for (size_t i = 0; i < d.size(); ++i) {
            d[i].address = i * cfg.hbm.interleave;
            d[i].bytes = cfg.hbm.interleave;
            d[i].queue = uint32_t(i % cfg.dma.queues);
            plat.tiles[0].pe.post_dma(d[i]);
        }
    });
    double occupancy = cfg.hbm.pc_bandwidth.transfer(double(cfg.hbm.interleave)).ns;
    EXPECT_LT(d.back().t_done - d.front().t_done, occupancy / 2);
}

TEST(HbmController, FunctionalReadBackEqualsWhatWasWritten) {
    init_kernel();
    PlatformConfig cfg = test::load_platform("tiny");  // functional: true
    ASSERT_TRUE(cfg.hbm.functional);
    Platform p("top", cfg);
    const uint64_t size = 10 * 1024 + 100;  // not a whole number of bursts
    std::vector<unsigned char> out(size), back(size, 0xEE), remote(size, 0xEE);
    for (size_t i = 0; i < size; ++i)
        out[i] = static_cast<unsigned char>(i * 7 + 3);
    uint64_t addr = p.stack_address(1, 300);  // unaligned, on the other stack
    DmaDescriptor w, r, via_interleaved;
    simulate(p, [&](Platform& plat) {
        sc_core::sc_event done;
        w = transfer(addr, size, true, 0, out.data(), [&](DmaDescriptor&) { done.notify(); });
        plat.tiles[0].pe.post_dma(w);
        sc_core::wait(done);
        r = transfer(addr, size, false, 1, back.data(), [&](DmaDescriptor&) { done.notify(); });
        plat.tiles[1].pe.post_dma(r);
        sc_core::wait(done);
        // Unwritten memory reads as zero.
        via_interleaved = transfer(plat.address_map.interleaved_base() + (1 << 20), size, false, 0, remote.data(),
                                   nullptr);
        plat.tiles[0].pe.post_dma(via_interleaved);
    });
    EXPECT_FALSE(w.failed);
    EXPECT_FALSE(r.failed);
    EXPECT_EQ(back, out);
    EXPECT_EQ(std::accumulate(remote.begin(), remote.end(), 0u), 0u);
    // A 1 GiB stack touched for 10 KiB holds one or two 64 KiB pages, not the whole stack.
    EXPECT_LE(p.hbm[1]->memory().pages(), 2u);
}

// Timing-only bursts point at the DMA's shared scratch buffer (a valid pointer, not data): in a
// functional HBM they must neither overwrite what a functional write stored nor allocate pages.
static void expect_timing_only_writes_leave_memory_alone(TimingMode timing) {
    init_kernel();
    PlatformConfig cfg = test::load_platform("tiny");  // functional: true
    ASSERT_TRUE(cfg.hbm.functional);
    cfg.sim.timing = timing;
    Platform p("top", cfg);
    const uint64_t size = 8 * 1024;
    std::vector<unsigned char> out(size), back(size, 0xEE);
    for (size_t i = 0; i < size; ++i)
        out[i] = static_cast<unsigned char>(i * 11 + 5);
    uint64_t addr = p.stack_address(0, 4096), elsewhere = p.stack_address(1, 64 << 20);
    DmaDescriptor w, timing_w, timing_elsewhere, r;
    simulate(p, [&](Platform& plat) {
        sc_core::sc_event done;
        auto run = [&](DmaDescriptor& d) {
            d.on_complete = [&](DmaDescriptor&) { done.notify(); };
            plat.tiles[0].pe.post_dma(d);
            sc_core::wait(done);
        };
        w = transfer(addr, size, true, 0, out.data(), nullptr);
        run(w);
        timing_w = transfer(addr, size, true, 1, nullptr, nullptr);  // same bytes, no data
        run(timing_w);
        timing_elsewhere = transfer(elsewhere, size, true, 2, nullptr, nullptr);
        run(timing_elsewhere);
        r = transfer(addr, size, false, 3, back.data(), nullptr);
        run(r);
    });
    EXPECT_FALSE(w.failed || timing_w.failed || timing_elsewhere.failed || r.failed);
    EXPECT_EQ(back, out);
    EXPECT_EQ(p.hbm[1]->memory().pages(), 0u) << "timing-only traffic allocated functional pages";
}

TEST(HbmController, TimingOnlyWritesLeaveFunctionalMemoryAlone) {
    expect_timing_only_writes_leave_memory_alone(TimingMode::At);
}

TEST(HbmController, TimingOnlyWritesLeaveFunctionalMemoryAloneUnderLt) {
    expect_timing_only_writes_leave_memory_alone(TimingMode::Lt);
}

TEST(HbmController, TimingOnlyWritesLeaveFunctionalMemoryAloneUnderFlow) {
    expect_timing_only_writes_leave_memory_alone(TimingMode::Flow);
}

static void expect_address_error_naming_the_address(TimingMode timing) {
    init_kernel();
    PlatformConfig cfg = test::load_platform("tiny");
    cfg.sim.timing = timing;
    Platform p("top", cfg);
    DmaDescriptor bad;
    simulate(p, [&](Platform& plat) {
        bad.address = 0x100000000ull;  // 4 GiB: past 2 x 1 GiB, below the interleaved window
        bad.bytes = 4096;
        plat.tiles[0].pe.post_dma(bad);
    });
    EXPECT_TRUE(bad.failed);
    EXPECT_NE(bad.error.find("0x100000000"), std::string::npos) << bad.error;
    EXPECT_NE(bad.error.find("address error"), std::string::npos) << bad.error;
    ASSERT_EQ(sim_errors().size(), 1u);
    EXPECT_EQ(sim_errors()[0], bad.error);
}

TEST(Dma, AddressOutsideTheMapIsAnErrorNamingTheAddress) {
    expect_address_error_naming_the_address(TimingMode::At);
}

TEST(Dma, AddressOutsideTheMapIsAnErrorNamingTheAddressUnderFlow) {
    expect_address_error_naming_the_address(TimingMode::Flow);
}

namespace {
// Accepts every request and never answers: transfers stay in flight.
struct BlackHole : sc_core::sc_module {
    tlm_utils::simple_target_socket<BlackHole> socket;
    explicit BlackHole(sc_core::sc_module_name n) : sc_module(n), socket("socket") {
        socket.register_nb_transport_fw(this, &BlackHole::fw);
    }
    tlm::tlm_sync_enum fw(tlm::tlm_generic_payload&, tlm::tlm_phase& phase, sc_core::sc_time&) {
        phase = tlm::END_REQ;
        return tlm::TLM_UPDATED;
    }
};
} // namespace

TEST(Dma, TransfersStillInFlightAtTheEndAreReported) {
    init_kernel();
    PlatformConfig cfg = test::load_platform("tiny");
    DmaEngine dma("dma", cfg.dma, 0);
    BlackHole hole("hole");
    nctlm::bind(dma.socket, hole.socket, "dma_hole");
    DmaDescriptor d;
    d.address = 0x1000;
    d.bytes = 3000;
    sc_core::sc_spawn([&] { dma.post(d); }, "traffic");
    sc_core::sc_start();
    EXPECT_EQ(dma.outstanding(), 1u);
    auto report = dma.outstanding_report();
    ASSERT_EQ(report.size(), 1u);
    EXPECT_NE(report[0].find("0x1000"), std::string::npos) << report[0];
    EXPECT_NE(report[0].find("3 bursts still in flight"), std::string::npos) << report[0];
}

TEST(Dma, QueuesShareChannelsRoundRobinAndKeepOrderWithinAQueue) {
    init_kernel();
    PlatformConfig cfg = test::load_platform("tiny", {"dma.channels=1"});
    Platform p("top", cfg);
    // Two queues, three descriptors each, one channel: service alternates q0, q1, q0, q1...
    std::vector<DmaDescriptor> d(6);
    simulate(p, [&](Platform& plat) {
        for (size_t i = 0; i < d.size(); ++i) {
            d[i].address = i * 4096;
            d[i].bytes = 1024;
            d[i].queue = i < 3 ? 0 : 1;
            plat.tiles[0].pe.post_dma(d[i]);
        }
    });
    auto start = [&](size_t i) { return d[i].t_first_issue; };
    EXPECT_LT(start(0), start(3));
    EXPECT_LT(start(3), start(1));
    EXPECT_LT(start(1), start(4));
    EXPECT_LT(start(4), start(2));
    EXPECT_LT(start(2), start(5));
}

// Issue 24: under channel_release=on_response the channel waits for its descriptor's completion,
// and the poster may post the same descriptor again from on_complete, to another queue (traffic
// with window=1 does). The channel used to read the descriptor's queue after that and freed the
// new queue's slot instead of its own: the counter wrapped and the new queue never got a channel.
TEST(Dma, OnResponseChannelLetsGoOfADescriptorTheCallbackReposts) {
    init_kernel();
    PlatformConfig cfg = test::load_platform("tiny", {"dma.channel_release=on_response", "dma.channels=1"});
    Platform p("top", cfg);
    DmaDescriptor d;
    int done = 0;
    d.bytes = 2048;
    d.on_complete = [&](DmaDescriptor& x) {
        if (++done == 12)
            return;
        x.address += 4096;
        x.queue = (x.queue + 1) % cfg.dma.queues;  // another queue each time
        p.tiles[0].pe.post_dma(x);
    };
    simulate(p, [&](Platform& plat) { plat.tiles[0].pe.post_dma(d); });
    EXPECT_EQ(done, 12);
    EXPECT_TRUE(p.outstanding_report().empty());
}

TEST(Dma, OnResponseDmaTrafficWithWindowOneFinishesOnEveryPlatform) {
    for (const char* platform : {"tiny", "trn1", "trn2"}) {
        auto r = test::run_cli(std::string("run -p ") + platform +
                               " -t traffic --set testbench.path=dma --set dma.channel_release=on_response "
                               "--set testbench.window=1 --set 'testbench.duration=2 us' --set 'testbench.warmup=1 us' -q");
        EXPECT_EQ(r.exit_code, 0) << platform << ": " << r.err;
    }
}

TEST(Dma, AWritePostedLaterDoesNotDelayReadDataAlreadyStreamingIn) {
    init_kernel();
    // Closed pages: the second read of the same rows must be a miss like the first, not a row hit.
    PlatformConfig cfg = test::load_platform("tiny", {"hbm.functional=false", "hbm.page_policy=closed"});
    Platform p("top", cfg);
    DmaDescriptor alone, read, write;
    simulate(p, [&](Platform& plat) {
        sc_core::sc_event done;
        auto notify = [&](DmaDescriptor&) { done.notify(); };
        alone = transfer(0, 4096, false, 0, nullptr, notify);
        plat.tiles[0].pe.post_dma(alone);
        sc_core::wait(done);
        double solo = alone.t_done - alone.t_post;
        read = transfer(0, 4096, false, 0, nullptr, notify);
        plat.tiles[0].pe.post_dma(read);
        // Late in the read, while its data is arriving, a store starts on another queue.
        sc_core::wait(sc_core::sc_time(0.9 * solo, sc_core::SC_NS));
        write = transfer(1 << 20, 4096, true, 1, nullptr, nullptr);
        plat.tiles[0].pe.post_dma(write);
        sc_core::wait(done);
    });
    EXPECT_NEAR(read.t_done - read.t_post, alone.t_done - alone.t_post, 0.01);
    EXPECT_GT(write.t_done, 0);
}
