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

// Keeps every sample: runs are at most a few million samples, and exact percentiles beat bins.
struct Histogram {
    std::string unit;
    std::vector<double> samples;
    void add(double v) { samples.push_back(v); }
    nlohmann::json summary() const;  // count, mean, p50, p90, p99, max
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
    Histogram& histogram(const std::string& path, const std::string& unit);
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
