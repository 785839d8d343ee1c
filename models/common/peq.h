// A payload event queue with callback and phase: tlm_utils::peq_with_cb_and_phase with the same
// delivery order, but cheaper timed entries. SystemC's keeps them in a sorted linked list (O(n)
// per insert), which dominated whole runs once an HBM controller held hundreds of queued bursts
// (docs/performance.md). Order, as in tlm_utils: delta notifications by delta parity, then timed
// entries by time and, at equal times, in insertion order.
//
// Timed entries mostly arrive in time order (a link's or a pseudo-channel's bursts): they wait in a
// NearlySortedQueue on (time, insertion order), O(1) for those, a heap only for the others.
// The kernel event is re-armed only when an entry is due before the pending notification, which
// is what sc_event::notify would keep anyway (the kernel sees the same calls, so the order of
// processes at equal times is unchanged).
#pragma once

#include "models/common/nearly_sorted_queue.h"
#include "models/common/sim.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <systemc>
#include <tlm>
#include <utility>
#include <vector>

namespace nctlm {

template <class Owner> class Peq : public sc_core::sc_object {
public:
    using Callback = void (Owner::*)(tlm::tlm_generic_payload&, const tlm::tlm_phase&);

    Peq(Owner* owner, Callback cb)
        : sc_object(sc_core::sc_gen_unique_name("peq_with_cb_and_phase")), owner_(owner), cb_(cb) {
        sc_core::sc_spawn_options opts;
        opts.spawn_method();
        opts.set_sensitivity(&event_);
        opts.dont_initialize();
        sc_core::sc_spawn([this] { fire(); }, sc_core::sc_gen_unique_name("fec"), &opts);
    }

    // Delivers (p, phase) to the owner's callback `when` from now (SC_ZERO_TIME: next delta).
    void notify(tlm::tlm_generic_payload& p, const tlm::tlm_phase& phase, const sc_core::sc_time& when) {
        if (when == sc_core::SC_ZERO_TIME)
            notify_delta(p, phase);
        else
            notify_timed(p, phase, sim_time().value() + when.value());
    }
    // Delivers at absolute time t_ns on the kernel's grid (at()); at or before now: next delta.
    // The same as notify(p, phase, until(t_ns)) without building sc_time values.
    void notify_at(tlm::tlm_generic_payload& p, const tlm::tlm_phase& phase, double t_ns) {
        sc_dt::uint64 t = at_ticks(t_ns), now = sim_time().value();
        if (t <= now)
            notify_delta(p, phase);
        else
            notify_timed(p, phase, t);
    }

private:
    using Entry = std::pair<tlm::tlm_generic_payload*, tlm::tlm_phase>;
    struct Timed {
        sc_dt::uint64 t, seq;
        tlm::tlm_generic_payload* p;
        tlm::tlm_phase phase;
    };
    struct Later {
        bool operator()(const Timed& a, const Timed& b) const { return a.t != b.t ? a.t > b.t : a.seq > b.seq; }
    };
    static constexpr sc_dt::uint64 kNone = std::numeric_limits<sc_dt::uint64>::max();

    void notify_delta(tlm::tlm_generic_payload& p, const tlm::tlm_phase& phase) {
        (sc_core::sc_delta_count() & 1 ? even_ : odd_).emplace_back(&p, phase);
        notify_next_delta();
    }
    void notify_next_delta() {
        event_.notify(sc_core::SC_ZERO_TIME);  // replaces a pending timed notification
        armed_delta_ = sc_core::sc_delta_count();
        armed_t_ = kNone;
    }
    void notify_timed(tlm::tlm_generic_payload& p, const tlm::tlm_phase& phase, sc_dt::uint64 t) {
        timed_.push({t, seq_++, &p, phase});
        arm(t);
    }
    // sc_event::notify keeps the earlier of a new and a pending notification: skip the call exactly
    // when the kernel would ignore it, i.e. a notification is still pending (a delta one made in
    // this delta cycle, or a timed one after now) and due no later than t.
    void arm(sc_dt::uint64 t) {
        if (armed_delta_ == sc_core::sc_delta_count())
            return;
        const sc_dt::uint64 now = sim_time().value();
        if (armed_t_ > now && armed_t_ <= t)
            return;
        armed_t_ = t;
        event_.notify(sc_core::sc_time::from_value(t - now));
    }
    void fire() {
        // Delta entries: an odd delta delivers those posted in even deltas, and vice versa.
        bool odd = sc_core::sc_delta_count() & 1;
        std::vector<Entry>& now_list = odd ? odd_ : even_;
        for (size_t i = 0; i < now_list.size(); ++i)
            (owner_->*cb_)(*now_list[i].first, now_list[i].second);
        now_list.clear();
        if (!(odd ? even_ : odd_).empty())
            notify_next_delta();
        // Timed entries due now, earliest inserted first.
        const sc_dt::uint64 now = sim_time().value();
        for (const Timed* e = timed_.front(); e && e->t == now; e = timed_.front()) {
            Timed d = *e;
            timed_.pop(e);
            (owner_->*cb_)(*d.p, d.phase);
        }
        if (const Timed* e = timed_.front())
            arm(e->t);
    }

    Owner* owner_;
    Callback cb_;
    std::vector<Entry> odd_, even_;  // for delivery in the next odd / even delta
    NearlySortedQueue<Timed, Later> timed_;  // by (time, insertion order)
    sc_dt::uint64 seq_ = 0;
    // The last notification asked of the kernel: a delta one in delta cycle armed_delta_, or a
    // timed one at armed_t_ (pending while after now).
    sc_dt::uint64 armed_delta_ = kNone, armed_t_ = kNone;
    sc_core::sc_event event_;
};

} // namespace nctlm
