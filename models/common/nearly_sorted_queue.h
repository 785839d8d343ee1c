// A priority queue for entries that mostly arrive in order (a link's or a pseudo-channel's
// bursts, the end times of requests served in turn): an entry not earlier than the last appended
// goes to a FIFO (O(1)), only an earlier one to a binary heap; the front is the earlier of the two
// fronts, so entries leave in the same total order as from one heap (`Later`: strict "a after
// b"; at equal keys the FIFO's entry first). Pure C++.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace nctlm {

template <class T, class Later> class NearlySortedQueue {
public:
    void push(const T& x) {
        if (head_ == fifo_.size() || !Later{}(fifo_.back(), x)) {
            fifo_.push_back(x);
        } else {
            heap_.push_back(x);
            std::push_heap(heap_.begin(), heap_.end(), Later{});
        }
    }
    // The earliest entry, or null.
    const T* front() const {
        const T* f = head_ < fifo_.size() ? &fifo_[head_] : nullptr;
        if (heap_.empty())
            return f;
        return !f || Later{}(*f, heap_.front()) ? &heap_.front() : f;
    }
    // Removes `f`, which front() returned.
    void pop(const T* f) {
        if (!heap_.empty() && f == &heap_.front()) {
            std::pop_heap(heap_.begin(), heap_.end(), Later{});
            heap_.pop_back();
        } else if (++head_ == fifo_.size()) {
            fifo_.clear();
            head_ = 0;
        } else if (head_ >= 64 && 2 * head_ >= fifo_.size()) {  // drop the delivered prefix
            fifo_.erase(fifo_.begin(), fifo_.begin() + std::ptrdiff_t(head_));
            head_ = 0;
        }
    }

private:
    std::vector<T> fifo_;  // [head_, end): in order
    size_t head_ = 0;
    std::vector<T> heap_;  // min-heap (by Later): entries that came out of order
};

} // namespace nctlm
