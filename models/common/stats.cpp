#include "models/common/stats.h"

#include "models/common/units.h"

#include <algorithm>
#include <cmath>

namespace nctlm {

uint32_t Histogram::bucket_of(uint64_t steps) {
    constexpr uint64_t exact = 2ull << kSubBits;  // 128: one bucket per step below
    if (steps < exact)
        return uint32_t(steps);
    int e = 63 - __builtin_clzll(steps);  // >= kSubBits + 1
    uint64_t sub = (steps >> (e - kSubBits)) - (1ull << kSubBits);  // 0..63
    return uint32_t(exact + uint64_t(e - kSubBits - 1) * (1ull << kSubBits) + sub);
}

uint64_t Histogram::bucket_width(uint32_t bucket) {
    constexpr uint64_t exact = 2ull << kSubBits;
    if (bucket < exact)
        return 1;
    return 1ull << ((bucket - exact) >> kSubBits) << 1;
}

uint64_t Histogram::bucket_low(uint32_t bucket) {
    constexpr uint64_t exact = 2ull << kSubBits;
    if (bucket < exact)
        return bucket;
    uint64_t octave = (bucket - exact) >> kSubBits, sub = (bucket - exact) & ((1ull << kSubBits) - 1);
    return ((1ull << kSubBits) + sub) << (octave + 1);
}

void Histogram::Side::add(uint32_t bucket, uint64_t n) {
    if (counts.empty()) {
        first = bucket;
        counts.assign(1, 0);
    } else if (bucket < first) {
        counts.insert(counts.begin(), first - bucket, 0);
        first = bucket;
    } else if (bucket >= first + counts.size()) {
        counts.resize(bucket - first + 1, 0);
    }
    counts[bucket - first] += n;
}

void Histogram::add(double v) {
    if (count_ == 0 || v < min_)
        min_ = v;
    if (count_ == 0 || v > max_)
        max_ = v;
    ++count_;
    sum_ += v;
    double steps = std::abs(v) / resolution + 0.5;
    if (steps < 1) {
        ++zeros_;
        return;
    }
    // Beyond 2^63 steps (2.5 hours in fs) everything shares the top bucket; max stays exact.
    uint64_t q = steps >= 9.2e18 ? (1ull << 63) : uint64_t(steps);
    Side& side = v < 0 ? neg_ : pos_;
    uint32_t bucket = bucket_of(q);
    if (bucket >= side.first && bucket - side.first < side.counts.size())  // the usual case: no growth
        ++side.counts[bucket - side.first];
    else
        side.add(bucket, 1);
}

void Histogram::merge(const Histogram& other) {
    if (other.count_ == 0)
        return;
    if (count_ == 0) {
        if (unit.empty())
            unit = other.unit;
        resolution = other.resolution;
        min_ = other.min_;
        max_ = other.max_;
    } else {
        min_ = std::min(min_, other.min_);
        max_ = std::max(max_, other.max_);
    }
    count_ += other.count_;
    zeros_ += other.zeros_;
    sum_ += other.sum_;
    for (const auto* sides : {&other.pos_, &other.neg_}) {
        Side& mine = sides == &other.pos_ ? pos_ : neg_;
        for (size_t i = 0; i < sides->counts.size(); ++i)
            if (sides->counts[i])
                mine.add(uint32_t(sides->first + i), sides->counts[i]);
    }
}

double Histogram::value_of(const Side&, uint32_t bucket, bool negative) const {
    // The middle of the bucket's grid steps: within half its width (<= 1/128 of its low end).
    double mid = double(bucket_low(bucket)) + double(bucket_width(bucket) - 1) / 2;
    double v = (negative ? -mid : mid) * resolution;
    return std::clamp(v, min_, max_);
}

double Histogram::percentile(double p) const {
    if (count_ == 0)
        return 0;
    uint64_t rank = uint64_t(std::ceil(p * double(count_)));
    rank = std::clamp<uint64_t>(rank, 1, count_);
    if (rank == count_)
        return max_;
    uint64_t seen = 0;
    // Ascending: negatives from the largest magnitude, then zeros, then positives.
    for (size_t i = neg_.counts.size(); i-- > 0;) {
        seen += neg_.counts[i];
        if (seen >= rank)
            return value_of(neg_, uint32_t(neg_.first + i), true);
    }
    seen += zeros_;
    if (seen >= rank)
        return std::clamp(0.0, min_, max_);
    for (size_t i = 0; i < pos_.counts.size(); ++i) {
        seen += pos_.counts[i];
        if (seen >= rank)
            return value_of(pos_, uint32_t(pos_.first + i), false);
    }
    return max_;
}

nlohmann::json Histogram::summary() const {
    nlohmann::json j;
    j["count"] = count_;
    j["unit"] = unit;
    if (count_ == 0)
        return j;
    // Times are whole fs: drop the float noise of their differences.
    auto out = [&](double v) { return unit == "ns" ? on_fs_grid(v) : v; };
    j["mean"] = out(mean());
    j["min"] = out(min_);
    j["p50"] = out(percentile(0.50));
    j["p90"] = out(percentile(0.90));
    j["p99"] = out(percentile(0.99));
    j["max"] = out(max_);
    return j;
}

void QueueStats::register_as(const std::string& path) {
    occupancy = &stats().histogram(path + ".occupancy", "requests", 1.0);
    time_full_ns = &stats().counter(path + ".time_full_ns", "ns");
}

void QueueStats::level(size_t size, size_t capacity, double now) {
    track.sample(now, double(size));
    if (size >= capacity && full_since < 0) {
        full_since = now;
    } else if (size < capacity && full_since >= 0) {
        time_full_ns->add(now - full_since);
        full_since = -1;
    }
}

StatsRegistry& StatsRegistry::instance() {
    static StatsRegistry r;
    return r;
}

Counter& StatsRegistry::counter(const std::string& path, const std::string& unit) {
    auto& c = counters_[path];
    if (!c) {
        c = std::make_unique<Counter>();
        c->unit = unit;
    }
    return *c;
}

Histogram& StatsRegistry::histogram(const std::string& path, const std::string& unit, double resolution) {
    auto& h = histograms_[path];
    if (!h) {
        h = std::make_unique<Histogram>();
        h->unit = unit;
        h->resolution = resolution;
    }
    return *h;
}

namespace {
nlohmann::json& slot(nlohmann::json& root, const std::string& path) {
    nlohmann::json* node = &root;
    size_t start = 0;
    while (true) {
        size_t dot = path.find('.', start);
        std::string part = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
        if (!node->is_object())
            *node = nlohmann::json::object();
        node = &(*node)[part];
        if (dot == std::string::npos)
            return *node;
        start = dot + 1;
    }
}
} // namespace

nlohmann::json StatsRegistry::to_json() const {
    nlohmann::json root = nlohmann::json::object();
    for (auto& [path, c] : counters_)
        slot(root, path) = c->unit == "ns" ? on_fs_grid(c->value) : c->value;
    for (auto& [path, h] : histograms_)
        slot(root, path) = h->summary();
    return root;
}

double StatsRegistry::value(const std::string& path) const {
    auto it = counters_.find(path);
    return it == counters_.end() ? 0.0 : it->second->value;
}

void StatsRegistry::clear() {
    counters_.clear();
    histograms_.clear();
}

} // namespace nctlm
