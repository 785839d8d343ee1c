// The DMA engine's request socket as a resource handed from channel to channel. Pure logic, no
// SystemC: the engine turns its answers into waits and notifications.
//
// Order: first come, first served. A channel that asks while the socket is owned (or others are
// already waiting) joins the tail of the queue; the owner hands the socket to the head of the queue
// when its last request is accepted (END_REQ). The DMA engine asks when a channel takes a
// descriptor, so descriptors reach the socket in the order they were taken (the queues' round
// robin), and holds it for the descriptor's bursts: interleaving the bursts of several
// descriptors, or leaving the order to whichever waiting thread the kernel runs first, moved the
// banked HBM's bandwidth by up to 25 % on stream. Nobody waits on a shared event: no futile wake-ups.
#pragma once

#include <cstddef>
#include <deque>

namespace nctlm {

class RequestHandoff {
public:
    // The socket is free at `free_ns` (its last request's END_REQ) with nobody owning or queued.
    struct Grant {
        bool now;        // true: the caller owns the socket, usable from `from_ns`
        double from_ns;  // when the socket is free (<= now: at once)
    };
    // `who` asks for the socket at `now_ns`. If !now, it is queued and must wait to be handed it.
    Grant acquire(int who, double now_ns) {
        if (owner_ < 0 && waiting_.empty()) {
            owner_ = who;
            return {true, free_ns_ > now_ns ? free_ns_ : now_ns};
        }
        waiting_.push_back(who);
        return {false, 0};
    }
    // The owner's request is accepted, the socket free from `free_ns`. Returns the channel it is
    // handed to (now the owner, to be woken at `free_ns`), or -1 if nobody waits.
    int release(double free_ns) {
        free_ns_ = free_ns;
        if (waiting_.empty()) {
            owner_ = -1;
            return -1;
        }
        owner_ = waiting_.front();
        waiting_.pop_front();
        return owner_;
    }
    int owner() const { return owner_; }
    size_t waiting() const { return waiting_.size(); }

private:
    int owner_ = -1;
    double free_ns_ = 0;
    std::deque<int> waiting_;
};

} // namespace nctlm
