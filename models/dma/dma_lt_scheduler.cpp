#include "models/dma/dma_lt_scheduler.h"

#include "models/common/sim.h"
#include "models/dma/dma_engine.h"

namespace nctlm {

DmaLtScheduler::DmaLtScheduler(sc_core::sc_module_name name, double lookahead_ns)
    : sc_module(name), lookahead_ns_(lookahead_ns) {
    SC_THREAD(run);
}

void DmaLtScheduler::add(DmaEngine& e) { e.lt_scheduler_ = this; }

void DmaLtScheduler::posted(DmaEngine& e) {
    if (!e.lt_posted_) {
        e.lt_posted_ = true;
        posted_.push_back(&e);
    }
    work_.notify(sc_core::SC_ZERO_TIME);
}

void DmaLtScheduler::queue(DmaEngine& e) {
    e.lt_queued_ = true;
    next_.push({e.lt_next_issue(), order_++, &e});
}

void DmaLtScheduler::run() {
    sc_core::sc_simcontext* kernel = sc_core::sc_get_curr_simcontext();
    while (true) {
        const double now = now_ns();
        for (DmaEngine* e : posted_) {  // taken onto free channels at the time they were posted
            e->lt_posted_ = false;
            if (e->lt_take(now) && !e->lt_queued_)
                queue(*e);
        }
        posted_.clear();
        if (next_.empty()) {
            sc_core::wait(work_);
            continue;
        }
        const Next top = next_.top();
        if (top.t > now) {
            // Nothing else happens before the kernel's next activity (0: something is due now).
            const double horizon = now + ns(sc_core::sc_time_to_pending_activity(kernel)) + lookahead_ns_;
            if (top.t >= horizon) {
                sc_core::wait(until(top.t), work_);  // let the kernel catch up; a post wakes us
                continue;
            }
        }
        next_.pop();
        top.engine->lt_queued_ = false;
        if (top.engine->lt_issue())
            queue(*top.engine);
    }
}

} // namespace nctlm
