#include "models/flow/pc_calibration.h"

#include "models/hbm/pc_scheduler.h"

#include <algorithm>
#include <deque>
#include <queue>
#include <random>
#include <vector>

namespace nctlm::flow {

namespace {

// Stack offset of byte `pc_offset` of pseudo-channel 0's own address space (its interleave
// chunks, one every pseudo_channels chunks of the stack).
uint64_t stack_offset(const HbmConfig& h, uint64_t pc_offset) {
    return pc_offset / h.interleave * h.interleave * h.pseudo_channels + pc_offset % h.interleave;
}

struct Request {
    double arrival;
    bool write;
    uint64_t offset;
    bool overflow = false;  // a write larger than the whole write queue: answered once drained
};

class Driver {
public:
    Driver(const HbmConfig& h, const PcLoad& load)
        : h_(h), load_(load), map_(h), timing_(DramTiming::from(h)), pc_(h, timing_), rng_(load.seed) {
        // The region: 256 MiB of the PC (far more rows than banks); request slots inside it.
        slots_ = std::max<uint64_t>(1, (uint64_t(256) << 20) / load.request_bytes);
    }

    PcMeasure run() {
        for (uint32_t i = 0; i < load_.window; ++i)
            issue(0);
        double now = 0;
        while (true) {
            const double arrival = arrivals_.empty() ? 1e300 : arrivals_.top().arrival;
            const double decision = pc_.empty() ? 1e300 : pc_.next_decision_ns(now);
            now = std::min(arrival, decision);
            if (now > load_.duration_ns)
                break;
            if (arrival <= decision) {
                Request r = arrivals_.top();
                arrivals_.pop();
                waiting_.push_back(r);
                refill(now);
                continue;
            }
            decide(now);
        }
        PcMeasure m;
        const double window = load_.duration_ns - load_.warmup_ns;
        m.bandwidth = bytes_ / window;
        m.read_latency = reads_ ? latency_sum_ / double(reads_) : 0;
        m.requests = requests_;
        return m;
    }

private:
    struct Later {
        bool operator()(const Request& a, const Request& b) const { return a.arrival > b.arrival; }
    };

    void issue(double t) {
        const uint64_t i = next_++;
        // Stream k's region starts about k/streams of the way in, an odd number of requests (so the
        // streams do not start in the same bank; aligned to the same bank, 8 streams lose 24 % of the
        // PC where the AT platforms' 8 tiles lose about none: docs/performance.md).
        const uint64_t k = i % load_.streams, region = slots_ / load_.streams | 1;
        uint64_t slot = load_.pattern == PcPattern::Sequential ? (k * region + i / load_.streams) % slots_
                                                               : rng_() % slots_;
        bool write = load_.read_fraction < 1 && std::generate_canonical<double, 53>(rng_) >= load_.read_fraction;
        arrivals_.push({t, write, stack_offset(h_, slot * load_.request_bytes), false});
    }

    uint32_t accesses(const Request& r) const {
        const uint32_t shift = map_.access_shift();
        return uint32_t(((r.offset + load_.request_bytes - 1) >> shift) - (r.offset >> shift) + 1);
    }

    // Admits waiting requests in arrival order while the queue has room (the AT refill).
    void refill(double now) {
        while (!waiting_.empty() && pc_.has_room(waiting_.front().write, accesses(waiting_.front()))) {
            Request r = waiting_.front();
            waiting_.pop_front();
            DramRequest d;
            d.tag = tags_.size();
            d.write = r.write;
            d.bytes = load_.request_bytes;
            d.ready_ns = now + timing_.front_end;
            pc_.describe(d, map_, r.offset);
            const uint32_t n = accesses(r);
            d.mark = r.write && n > h_.write_queue ? n - h_.write_queue : 0;
            r.overflow = d.mark > 0;
            tags_.push_back(r);
            pc_.enqueue(std::move(d));
            if (r.write && !r.overflow)  // posted: answered on admission, the next request goes now
                issue(now);
        }
    }

    void decide(double now) {
        Scheduled s = pc_.schedule_next(now);
        const Request& r = tags_[s.tag];
        if (s.last_data_ns >= load_.warmup_ns && s.last_data_ns <= load_.duration_ns) {
            bytes_ += double(s.bytes);
            ++requests_;
            if (!s.write) {
                latency_sum_ += s.last_data_ns - r.arrival;
                ++reads_;
            }
        }
        if (!s.write)
            issue(s.last_data_ns);
        else if (r.overflow)
            issue(s.mark_ns);
        refill(now);
    }

    const HbmConfig& h_;
    PcLoad load_;
    BankMap map_;
    DramTiming timing_;
    PcScheduler pc_;
    std::mt19937_64 rng_;
    uint64_t slots_, next_ = 0;
    std::priority_queue<Request, std::vector<Request>, Later> arrivals_;
    std::deque<Request> waiting_;
    std::vector<Request> tags_;
    double bytes_ = 0, latency_sum_ = 0;
    uint64_t requests_ = 0, reads_ = 0;
};

} // namespace

PcMeasure measure_pc(const HbmConfig& hbm, const PcLoad& load) {
    return Driver(hbm, load).run();
}

double cold_latency(const HbmConfig& hbm, uint64_t request_bytes, bool write) {
    if (write)
        return 0;  // posted: accepted into an empty write queue at once
    DramTiming timing = DramTiming::from(hbm);
    BankMap map(hbm);
    PcScheduler pc(hbm, timing);
    DramRequest d;
    d.bytes = request_bytes;
    d.ready_ns = timing.front_end;
    pc.describe(d, map, 0);
    pc.enqueue(std::move(d));
    Scheduled s = pc.schedule_next(pc.next_decision_ns(0));
    return s.last_data_ns;
}

} // namespace nctlm::flow
