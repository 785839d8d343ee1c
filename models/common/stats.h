// Stats registry: modules own counters and histograms, registered under their SystemC
// hierarchical name at construction ("top.tile0.dma.bytes_read"). The registry writes JSON at the
// end of simulation; modules never format output themselves. Pure C++.
#pragma once

#include "models/common/trace.h"

#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace nctlm {

struct Counter {
    double value = 0;
    std::string unit;
    void add(double v) { value += v; }
};

// A fixed-size, log-bucketed histogram (HDR-style): O(1) memory whatever the run length.
// count, min, max and mean are exact; p50/p90/p99 are within 1/128 (< 1 %) relative error.
// Values are recorded on a grid of `resolution` (default 1e-6: 1 fs for ns, the kernel's grid):
// below 128 grid steps every step has its own bucket (exact), above, each power of two is cut
// into 64 buckets. Buckets are held from the lowest to the highest seen (at most 64 x 64 + 128
// per sign); samples within 1/2 step of 0 are counted as exactly 0.
struct Histogram {
    std::string unit;
    double resolution = 1e-6;
    void add(double v);
    void merge(const Histogram& other);  // as if other's samples had been added here (same resolution)
    uint64_t count() const { return count_; }
    double min() const { return min_; }
    double max() const { return max_; }
    double mean() const { return count_ ? sum_ / double(count_) : 0; }
    // Nearest-rank percentile (p in (0, 1]), within 1/128 relative of the exact sample, in [min, max].
    double percentile(double p) const;
    nlohmann::json summary() const;  // count, mean, min, p50, p90, p99, max
    size_t bucket_count() const { return pos_.counts.size() + neg_.counts.size(); }  // memory held

    static constexpr int kSubBits = 6;  // 64 buckets per power of two above the exact range
    static uint32_t bucket_of(uint64_t steps);
    static uint64_t bucket_low(uint32_t bucket);    // first grid step of a bucket
    static uint64_t bucket_width(uint32_t bucket);  // grid steps it covers

private:
    struct Side {  // |v| of the positive or the negative samples, by bucket
        uint32_t first = 0;
        std::vector<uint64_t> counts;  // counts[i]: bucket first + i
        void add(uint32_t bucket, uint64_t n);
    };
    double value_of(const Side& side, uint32_t bucket, bool negative) const;
    uint64_t count_ = 0, zeros_ = 0;
    double sum_ = 0, min_ = 0, max_ = 0;
    Side pos_, neg_;
};

// Occupancy seen by each arrival (p50/p99/max) and the time a queue spent full.
struct QueueStats {
    Histogram* occupancy = nullptr;
    Counter* time_full_ns = nullptr;
    double full_since = -1;
    TraceCounter track;  // opened by the owner when tracing: level() steps it
    void register_as(const std::string& path);
    void sample(size_t seen) { occupancy->add(double(seen)); }  // the occupancy an arrival saw
    void level(size_t size, size_t capacity, double now);       // after every change
};

class StatsRegistry {
public:
    static StatsRegistry& instance();
    Counter& counter(const std::string& path, const std::string& unit = "");
    // resolution: the histogram's grid (default 1e-6: 1 fs for ns); 1 for integer counts.
    Histogram& histogram(const std::string& path, const std::string& unit, double resolution = 1e-6);
    // Nested JSON by the dots of each path; counters as numbers, histograms as summaries.
    nlohmann::json to_json() const;
    double value(const std::string& path) const;  // a counter's value, 0 if absent
    void clear();

private:
    std::map<std::string, std::unique_ptr<Counter>> counters_;
    std::map<std::string, std::unique_ptr<Histogram>> histograms_;
};

inline StatsRegistry& stats() { return StatsRegistry::instance(); }

} // namespace nctlm
