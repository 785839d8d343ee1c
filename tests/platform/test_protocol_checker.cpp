// The base-protocol checker must catch each rule it claims (a checker that cannot fail proves
// nothing) and pass clean traffic; and with NCTLM_PROTOCOL_CHECK the platform runs clean.
#include "models/checker/bind.h"
#include "models/checker/protocol_checker.h"
#include "models/common/errors.h"
#include "models/common/sim.h"
#include "tests/support.h"

#include <algorithm>
#include <gtest/gtest.h>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

using namespace nctlm;

namespace {

// Answers BEGIN_REQ with END_REQ (TLM_UPDATED), then BEGIN_RESP 10 ns later on the backward path.
struct Target : sc_core::sc_module {
    tlm_utils::simple_target_socket<Target> socket;
    tlm::tlm_generic_payload* pending = nullptr;
    bool hold = false;  // accept BEGIN_REQ without END_REQ (and never answer)
    sc_core::sc_event respond;
    SC_HAS_PROCESS(Target);
    explicit Target(sc_core::sc_module_name n) : sc_module(n), socket("socket") {
        socket.register_nb_transport_fw(this, &Target::fw);
        socket.register_b_transport(this, &Target::b);
        SC_METHOD(send_response);
        sensitive << respond;
        dont_initialize();
    }
    tlm::tlm_sync_enum fw(tlm::tlm_generic_payload& p, tlm::tlm_phase& ph, sc_core::sc_time&) {
        if (ph == tlm::BEGIN_REQ && hold)
            return tlm::TLM_ACCEPTED;
        if (ph == tlm::BEGIN_REQ) {
            pending = &p;
            respond.notify(10, sc_core::SC_NS);
            ph = tlm::END_REQ;
            return tlm::TLM_UPDATED;
        }
        return tlm::TLM_COMPLETED;  // END_RESP
    }
    void b(tlm::tlm_generic_payload& p, sc_core::sc_time&) { p.set_response_status(tlm::TLM_OK_RESPONSE); }
    void send_response() {
        pending->set_response_status(tlm::TLM_OK_RESPONSE);
        tlm::tlm_phase ph = tlm::BEGIN_RESP;
        sc_core::sc_time d = sc_core::SC_ZERO_TIME;
        socket->nb_transport_bw(*pending, ph, d);
    }
};

struct Mm : tlm::tlm_mm_interface {
    void free(tlm::tlm_generic_payload*) override {}
};

// Sends what `script` says; the checker sits between it and the target.
struct Initiator : sc_core::sc_module {
    tlm_utils::simple_initiator_socket<Initiator> socket;
    std::function<void(Initiator&)> script;
    Mm mm;
    tlm::tlm_generic_payload a{&mm}, b{&mm};
    unsigned char data[64] = {};
    SC_HAS_PROCESS(Initiator);
    explicit Initiator(sc_core::sc_module_name n) : sc_module(n), socket("socket") {
        socket.register_nb_transport_bw(this, &Initiator::bw);
        for (auto* p : {&a, &b}) {
            p->set_command(tlm::TLM_READ_COMMAND);
            p->set_address(0x100);
            p->set_data_ptr(data);
            p->set_data_length(64);
            p->set_streaming_width(64);
            p->acquire();
        }
        SC_THREAD(run);
    }
    tlm::tlm_sync_enum bw(tlm::tlm_generic_payload&, tlm::tlm_phase& ph, sc_core::sc_time&) {
        if (ph == tlm::BEGIN_RESP) {
            ph = tlm::END_RESP;
            return tlm::TLM_COMPLETED;
        }
        return tlm::TLM_ACCEPTED;
    }
    tlm::tlm_sync_enum send(tlm::tlm_generic_payload& p, tlm::tlm_phase ph) {
        sc_core::sc_time d = sc_core::SC_ZERO_TIME;
        return socket->nb_transport_fw(p, ph, d);
    }
    void run() { script(*this); }
};

struct Bench {
    Initiator init{"init"};
    ProtocolChecker checker{"checker"};
    Target target{"target"};
    explicit Bench(std::function<void(Initiator&)> script) {
        init.script = std::move(script);
        init.socket.bind(checker.target);
        checker.initiator.bind(target.socket);
    }
    std::string errors() {
        std::string all;
        for (auto& e : sim_errors())
            all += e + "\n";
        return all;
    }
};

} // namespace

TEST(ProtocolChecker, CleanTransactionsPass) {
    Bench b([](Initiator& i) {
        for (int k = 0; k < 3; ++k) {
            i.send(i.a, tlm::BEGIN_REQ);
            sc_core::wait(20, sc_core::SC_NS);
        }
        sc_core::sc_time d = sc_core::SC_ZERO_TIME;
        i.a.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
        i.socket->b_transport(i.a, d);
    });
    sc_core::sc_start();
    EXPECT_EQ(b.checker.violations(), 0u) << b.errors();
    EXPECT_GE(b.checker.calls(), 7u);  // 3 x (BEGIN_REQ, BEGIN_RESP) + b_transport
}

TEST(ProtocolChecker, NullDataPointerIs14_11) {
    Bench b([](Initiator& i) {
        i.a.set_data_ptr(nullptr);
        i.send(i.a, tlm::BEGIN_REQ);
    });
    sc_core::sc_start();
    EXPECT_GE(b.checker.violations(), 1u);
    EXPECT_NE(b.errors().find("IEEE 1666-2011 14.11"), std::string::npos) << b.errors();
}

TEST(ProtocolChecker, SecondBeginReqBeforeEndReqIsRequestExclusion) {
    // A target that never answers END_REQ at once: accept and hold.
    Bench b([](Initiator& i) {
        i.send(i.a, tlm::BEGIN_REQ);
        i.send(i.b, tlm::BEGIN_REQ);
    });
    b.target.hold = true;
    sc_core::sc_start();
    EXPECT_NE(b.errors().find("15.2.6"), std::string::npos) << b.errors();
}

TEST(ProtocolChecker, AddressChangedDuringTransactionIs14_7) {
    Bench b([](Initiator& i) {
        i.send(i.a, tlm::BEGIN_REQ);
        i.a.set_address(0x200);  // before the response arrives
    });
    sc_core::sc_start();
    EXPECT_NE(b.errors().find("14.7"), std::string::npos) << b.errors();
}

TEST(ProtocolChecker, EndRespWithoutBeginRespIsAPhaseError) {
    Bench b([](Initiator& i) { i.send(i.b, tlm::END_RESP); });
    sc_core::sc_start();
    EXPECT_NE(b.errors().find("15.2.5"), std::string::npos) << b.errors();
}

TEST(ProtocolChecker, ReleasedPayloadIs14_5) {
    Bench b([](Initiator& i) {
        i.a.release();  // reference count back to 0 (our mm does not recycle it)
        i.send(i.a, tlm::BEGIN_REQ);
    });
    sc_core::sc_start();
    EXPECT_NE(b.errors().find("14.5"), std::string::npos) << b.errors();
}

// Every binding of a platform carries a checker in an NCTLM_PROTOCOL_CHECK build; a GEMM on
// tiny exercises DMA -> NoC -> HBM and the PE's SBUF/PSUM ports.
static void expect_gemm_on_tiny_clean_on_every_binding(const std::vector<std::string>& overrides) {
    RunOutcome out = test::run_testbench("tiny", "gemm", overrides, "configs/workloads/gemm_32x1024x32_fp32_streamed.yaml");
    EXPECT_TRUE(out.errors.empty()) << out.errors.front();
    ASSERT_FALSE(ProtocolChecker::all().empty());
    uint64_t calls = 0;
    for (auto* c : ProtocolChecker::all()) {
        EXPECT_EQ(c->violations(), 0u) << c->name();
        calls += c->calls();
    }
    EXPECT_GT(calls, 1000u);
}

TEST(ProtocolChecker, GemmOnTinyIsCleanOnEveryBinding) {
    if (!kProtocolCheck)
        GTEST_SKIP() << "built without NCTLM_PROTOCOL_CHECK (the asan preset turns it on)";
    expect_gemm_on_tiny_clean_on_every_binding({});
}

// The loosely-timed path (sim.timing: lt) sends its bursts with b_transport through the same
// checkers: non-null data pointer, attributes unchanged, response status set on return.
TEST(ProtocolChecker, GemmOnTinyUnderLtIsCleanOnEveryBinding) {
    if (!kProtocolCheck)
        GTEST_SKIP() << "built without NCTLM_PROTOCOL_CHECK (the asan preset turns it on)";
    expect_gemm_on_tiny_clean_on_every_binding({"sim.timing=lt"});
}

// Multi-chip: every NoC-to-link, link-to-NoC binding (both virtual channels) carries a checker; a
// ring and a tree all-reduce over four chips (the tree routes over two hops) run clean, AT and LT.
static void expect_collective_over_chips_clean(const std::vector<std::string>& extra) {
    std::vector<std::string> sets = {"platform.chips=4", "link.torus_width=2", "testbench.ranks=4",
                                     "workload.size=256 KiB"};
    sets.insert(sets.end(), extra.begin(), extra.end());
    RunOutcome out = test::run_testbench("tiny", "collective", sets);
    EXPECT_TRUE(out.errors.empty()) << out.errors.front();
    uint64_t link_calls = 0;
    for (auto* c : ProtocolChecker::all()) {
        EXPECT_EQ(c->violations(), 0u) << c->name();
        if (std::string(c->name()).find("link") != std::string::npos)
            link_calls += c->calls();
    }
    EXPECT_GT(link_calls, 1000u);
}

TEST(ProtocolChecker, CollectiveOverChipsIsCleanOnEveryBinding) {
    if (!kProtocolCheck)
        GTEST_SKIP() << "built without NCTLM_PROTOCOL_CHECK (the asan preset turns it on)";
    expect_collective_over_chips_clean({});
}

TEST(ProtocolChecker, TreeCollectiveOverChipsUnderLtIsCleanOnEveryBinding) {
    if (!kProtocolCheck)
        GTEST_SKIP() << "built without NCTLM_PROTOCOL_CHECK (the asan preset turns it on)";
    expect_collective_over_chips_clean({"testbench.algorithm=tree", "sim.timing=lt"});
}

// The traffic testbench's own generator (path=hbm) binds straight to a controller: through
// nctlm::bind its transactions are checked too (they were not before issue 23).
TEST(ProtocolChecker, TrafficGeneratorOnTheHbmPathIsChecked) {
    if (!kProtocolCheck)
        GTEST_SKIP() << "built without NCTLM_PROTOCOL_CHECK (the asan preset turns it on)";
    RunOutcome out = test::run_testbench("tiny", "traffic", {"testbench.duration=3 us", "testbench.warmup=1 us"});
    EXPECT_TRUE(out.errors.empty()) << out.errors.front();
    auto it = std::find_if(ProtocolChecker::all().begin(), ProtocolChecker::all().end(),
                           [](ProtocolChecker* c) { return std::string(c->name()).find("traffic_gen_hbm") != std::string::npos; });
    ASSERT_NE(it, ProtocolChecker::all().end());
    EXPECT_GT((*it)->calls(), 100u);
    EXPECT_EQ((*it)->violations(), 0u);
}
