// A payload event queue with callback and phase: tlm_utils::peq_with_cb_and_phase with the same
// delivery order, but a binary heap for the timed entries. SystemC's keeps them in a sorted
// linked list (O(n) per insert), which dominated whole runs once an HBM controller held hundreds
// of queued bursts (docs/performance.md). Order, as in tlm_utils: delta notifications by delta
// parity, then timed entries by time and, at equal times, in insertion order.
#pragma once

#include <algorithm>
#include <cstdint>
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
        if (when == sc_core::SC_ZERO_TIME) {
            (sc_core::sc_delta_count() & 1 ? even_ : odd_).emplace_back(&p, phase);
            event_.notify(sc_core::SC_ZERO_TIME);
        } else {
            timed_.push_back({(sc_core::sc_time_stamp() + when).value(), seq_++, &p, phase});
            std::push_heap(timed_.begin(), timed_.end(), Later{});
            event_.notify(when);  // keeps the earlier of this and any pending notification
        }
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

    void fire() {
        // Delta entries: an odd delta delivers those posted in even deltas, and vice versa.
        bool odd = sc_core::sc_delta_count() & 1;
        std::vector<Entry>& now_list = odd ? odd_ : even_;
        for (size_t i = 0; i < now_list.size(); ++i)
            (owner_->*cb_)(*now_list[i].first, now_list[i].second);
        now_list.clear();
        if (!(odd ? even_ : odd_).empty())
            event_.notify(sc_core::SC_ZERO_TIME);
        // Timed entries due now, earliest inserted first.
        const sc_dt::uint64 now = sc_core::sc_time_stamp().value();
        while (!timed_.empty() && timed_.front().t == now) {
            std::pop_heap(timed_.begin(), timed_.end(), Later{});
            Timed e = timed_.back();
            timed_.pop_back();
            (owner_->*cb_)(*e.p, e.phase);
        }
        if (!timed_.empty())
            event_.notify(sc_core::sc_time::from_value(timed_.front().t - now));
    }

    Owner* owner_;
    Callback cb_;
    std::vector<Entry> odd_, even_;  // for delivery in the next odd / even delta
    std::vector<Timed> timed_;       // min-heap on (time, insertion order)
    sc_dt::uint64 seq_ = 0;
    sc_core::sc_event event_;
};

} // namespace nctlm
