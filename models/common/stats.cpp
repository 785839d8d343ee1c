#include "models/common/stats.h"

#include "models/common/units.h"

#include <algorithm>
#include <cmath>

namespace nctlm {

nlohmann::json Histogram::summary() const {
    nlohmann::json j;
    j["count"] = samples.size();
    j["unit"] = unit;
    if (samples.empty())
        return j;
    std::vector<double> s = samples;
    if (unit == "ns")  // times are whole fs: drop the float noise of their differences
        for (double& v : s)
            v = on_fs_grid(v);
    std::sort(s.begin(), s.end());
    // Nearest-rank percentile.
    auto pct = [&](double p) {
        size_t rank = size_t(std::ceil(p * s.size()));
        return s[rank == 0 ? 0 : std::min(rank, s.size()) - 1];
    };
    double sum = 0;
    for (double v : s)
        sum += v;
    j["mean"] = unit == "ns" ? on_fs_grid(sum / s.size()) : sum / s.size();
    j["min"] = s.front();
    j["p50"] = pct(0.50);
    j["p90"] = pct(0.90);
    j["p99"] = pct(0.99);
    j["max"] = s.back();
    return j;
}

void QueueStats::register_as(const std::string& path) {
    occupancy = &stats().histogram(path + ".occupancy", "requests");
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

Histogram& StatsRegistry::histogram(const std::string& path, const std::string& unit) {
    auto& h = histograms_[path];
    if (!h) {
        h = std::make_unique<Histogram>();
        h->unit = unit;
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
