// nctlm::Peq must deliver in exactly the order tlm_utils::peq_with_cb_and_phase does (it replaces
// it in the NoC and HBM for speed only). Two owners get the same pseudo-random schedule — delta
// and timed notifications, many at equal times, some posted from inside callbacks — and must
// record the same (time, delta, payload, phase) sequence.
#include "models/common/peq.h"

#include <gtest/gtest.h>
#include <random>
#include <systemc>
#include <tlm>
#include <tlm_utils/peq_with_cb_and_phase.h>
#include <tuple>
#include <type_traits>
#include <vector>

namespace {

using Record = std::tuple<sc_dt::uint64, sc_dt::uint64, uint64_t, int>;

template <template <class> class Queue> class Owner : public sc_core::sc_module {
public:
    SC_HAS_PROCESS(Owner);
    // absolute: post with notify_at(now + delay) (nctlm::Peq only) instead of notify(delay).
    explicit Owner(sc_core::sc_module_name name, bool absolute = false)
        : sc_module(name), peq_(this, &Owner::deliver), payloads_(64), absolute_(absolute) {
        for (size_t i = 0; i < payloads_.size(); ++i)
            payloads_[i].set_address(i);
        SC_THREAD(drive);
    }
    std::vector<Record> log;

private:
    sc_core::sc_time delay(std::mt19937& rng) {
        static const int choices_ps[] = {0, 0, 1000, 1000, 2000, 5000};
        return sc_core::sc_time(choices_ps[rng() % 6], sc_core::SC_PS);
    }
    void drive() {
        for (int step = 0; step < 400; ++step) {
            for (int k = int(rng_() % 4); k >= 0; --k)
                post(payloads_[rng_() % payloads_.size()], tlm::BEGIN_REQ, delay(rng_));
            sc_core::sc_time d = delay(rng_);
            if (d == sc_core::SC_ZERO_TIME)
                sc_core::wait(sc_core::SC_ZERO_TIME);
            else
                sc_core::wait(d);
        }
    }
    void deliver(tlm::tlm_generic_payload& p, const tlm::tlm_phase& phase) {
        log.emplace_back(sc_core::sc_time_stamp().value(), sc_core::sc_delta_count(), p.get_address(), int(phase));
        if (phase == tlm::BEGIN_REQ && p.get_address() % 3 == 0)  // re-post from inside the callback
            post(p, tlm::BEGIN_RESP, delay(cb_rng_));
    }
    void post(tlm::tlm_generic_payload& p, const tlm::tlm_phase& phase, const sc_core::sc_time& d) {
        if constexpr (std::is_same_v<Queue<Owner>, nctlm::Peq<Owner>>) {
            if (absolute_) {
                peq_.notify_at(p, phase, nctlm::now_ns() + nctlm::ns(d));
                return;
            }
        }
        peq_.notify(p, phase, d);
    }

    Queue<Owner> peq_;
    std::vector<tlm::tlm_generic_payload> payloads_;
    bool absolute_;
    std::mt19937 rng_{12345}, cb_rng_{678};
};

template <class O> using Reference = tlm_utils::peq_with_cb_and_phase<O>;
template <class O> using Ours = nctlm::Peq<O>;

TEST(Peq, DeliversInTheSameOrderAsTlmUtils) {
    Owner<Reference> reference("reference");
    Owner<Ours> ours("ours");
    sc_core::sc_start();
    ASSERT_GT(reference.log.size(), 1000u);
    ASSERT_EQ(reference.log.size(), ours.log.size());
    for (size_t i = 0; i < reference.log.size(); ++i)
        ASSERT_EQ(reference.log[i], ours.log[i]) << "entry " << i;
}

// The same schedule posted at absolute times (notify_at, as the NoC and HBM post) and through the
// FIFO/heap split and the skipped kernel re-arms: still tlm_utils' order.
TEST(Peq, NotifyAtDeliversInTheSameOrderAsTlmUtils) {
    Owner<Reference> reference("reference");
    Owner<Ours> ours("ours", true);
    sc_core::sc_start();
    ASSERT_GT(reference.log.size(), 1000u);
    ASSERT_EQ(reference.log.size(), ours.log.size());
    for (size_t i = 0; i < reference.log.size(); ++i)
        ASSERT_EQ(reference.log[i], ours.log[i]) << "entry " << i;
}

} // namespace
