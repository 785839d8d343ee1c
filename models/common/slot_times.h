// A pool of identical slots (credits, buffer entries), each free again at some time: the
// loosely-timed paths take the earliest free one and book it until a later time. A min-heap, so
// taking costs O(log slots) rather than a scan (an HBM ingress buffer has hundreds of slots).
#pragma once

#include <cstddef>
#include <functional>
#include <queue>
#include <vector>

namespace nctlm {

class SlotTimes {
public:
    void assign(size_t slots, double free_ns) {
        heap_ = {};
        for (size_t i = 0; i < slots; ++i)
            heap_.push(free_ns);
    }
    size_t size() const { return heap_.size(); }
    // When the earliest slot is free (the pool must not be empty).
    double earliest() const { return heap_.top(); }
    // Books the earliest slot until `free_ns`.
    void book_earliest(double free_ns) {
        heap_.pop();
        heap_.push(free_ns);
    }

private:
    std::priority_queue<double, std::vector<double>, std::greater<double>> heap_;
};

} // namespace nctlm
