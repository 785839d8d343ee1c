#include "models/flow/flow_table.h"

#include <cmath>
#include <fmt/format.h>
#include <stdexcept>

namespace nctlm::flow {

namespace {
constexpr const char* kProvenance =
    "derived from the banked model: nctlm calibrate flow drives one pseudo-channel's PcScheduler as the "
    "AT controller does (models/flow/pc_calibration.h)";
constexpr double kDuration = 20000, kWarmup = 2000;  // ns of each measured load

const char* pattern_name(int p) { return p == 0 ? "sequential" : "random"; }
} // namespace

nlohmann::json hbm_json(const HbmConfig& hbm) {
    nlohmann::json j = nlohmann::json::object();
    for (const auto& f : HbmConfig::fields())
        j[f.key] = f.show(hbm);
    return j;
}

std::string hbm_hash(const HbmConfig& hbm) {
    const std::string text = hbm_json(hbm).dump();
    uint64_t h = 1469598103934665603ull;
    for (unsigned char c : text) {
        h ^= c;
        h *= 1099511628211ull;
    }
    return fmt::format("{:016x}", h);
}

FlowTable FlowTable::calibrate(const HbmConfig& hbm) {
    FlowTable t;
    t.hash_ = hbm_hash(hbm);
    t.provenance_ = kProvenance;
    t.hbm_ = hbm_json(hbm);
    t.peak_ = hbm.pc_bandwidth.bytes_per_s / 1e9;
    HbmConfig unrefreshed = hbm;
    unrefreshed.refresh = RefreshMode::Off;
    for (uint64_t bytes = std::min<uint64_t>(64, hbm.interleave); bytes <= hbm.interleave; bytes *= 2) {
        Row row;
        row.bytes = bytes;
        if (hbm.model == HbmModel::Pipe) {  // a fixed-rate pipe behind the controller latency, in order
            row.cold_read = row.cold_write = hbm.controller_latency.ns + double(bytes) / t.peak_;
            for (auto& by_pattern : row.points)
                for (auto& by_fraction : by_pattern)
                    for (size_t w = 0; w < kWindows.size(); ++w)
                        by_fraction[w] = {std::min(t.peak_, kWindows[w] * double(bytes) / row.cold_read),
                                          row.cold_read * std::max(1.0, kWindows[w] * double(bytes) / t.peak_ /
                                                                            row.cold_read)};
            for (auto& by_pattern : row.unrefreshed)
                by_pattern.fill(t.peak_);
            for (size_t f = 0; f < kReadFractions.size(); ++f) {
                row.streams[f].fill(t.peak_);
                row.streams_unrefreshed[f].fill(t.peak_);
            }
            t.rows_.push_back(row);
            continue;
        }
        row.cold_read = flow::cold_latency(hbm, bytes, false);
        row.cold_write = flow::cold_latency(hbm, bytes, true);
        for (int p = 0; p < 2; ++p)
            for (size_t f = 0; f < kReadFractions.size(); ++f) {
                PcLoad load;
                load.request_bytes = bytes;
                load.pattern = PcPattern(p);
                load.read_fraction = kReadFractions[f];
                load.duration_ns = kDuration;
                load.warmup_ns = kWarmup;
                for (size_t w = 0; w < kWindows.size(); ++w) {
                    load.window = kWindows[w];
                    PcMeasure m = measure_pc(hbm, load);
                    row.points[p][f][w] = {m.bandwidth, m.read_latency};
                }
                load.window = kWindows.back();
                row.unrefreshed[p][f] = measure_pc(unrefreshed, load).bandwidth;
                if (PcPattern(p) != PcPattern::Sequential)
                    continue;
                for (size_t k = 0; k < kStreams.size(); ++k) {
                    load.streams = kStreams[k];
                    row.streams[f][k] = measure_pc(hbm, load).bandwidth;
                    row.streams_unrefreshed[f][k] = measure_pc(unrefreshed, load).bandwidth;
                }
            }
        t.rows_.push_back(row);
    }
    return t;
}

nlohmann::json FlowTable::to_json() const {
    nlohmann::json rows = nlohmann::json::array();
    for (const Row& r : rows_) {
        nlohmann::json loads = nlohmann::json::array();
        for (int p = 0; p < 2; ++p)
            for (size_t f = 0; f < kReadFractions.size(); ++f) {
                nlohmann::json windows = nlohmann::json::array();
                for (size_t w = 0; w < kWindows.size(); ++w)
                    windows.push_back({{"window", kWindows[w]},
                                       {"bandwidth_gbs", r.points[p][f][w].bandwidth},
                                       {"read_latency_ns", r.points[p][f][w].latency}});
                nlohmann::json load = {{"pattern", pattern_name(p)},
                                       {"read_fraction", kReadFractions[f]},
                                       {"unrefreshed_gbs", r.unrefreshed[p][f]},
                                       {"windows", windows}};
                if (p == int(PcPattern::Sequential)) {
                    nlohmann::json streams = nlohmann::json::array();
                    for (size_t k = 0; k < kStreams.size(); ++k)
                        streams.push_back({{"streams", kStreams[k]},
                                           {"bandwidth_gbs", r.streams[f][k]},
                                           {"unrefreshed_gbs", r.streams_unrefreshed[f][k]}});
                    load["streams"] = streams;
                }
                loads.push_back(load);
            }
        rows.push_back({{"bytes", r.bytes},
                        {"cold_read_ns", r.cold_read},
                        {"cold_write_ns", r.cold_write},
                        {"loads", loads}});
    }
    return {{"what", "flow-mode table of one HBM pseudo-channel (sim.timing: flow; docs/performance.md)"},
            {"provenance", provenance_},
            {"hbm_hash", hash_},
            {"hbm", hbm_},
            {"peak_gbs", peak_},
            {"measured", {{"duration_ns", kDuration}, {"warmup_ns", kWarmup}}},
            {"rows", rows}};
}

FlowTable FlowTable::from_json(const nlohmann::json& j) {
    try {
        FlowTable t;
        t.hash_ = j.at("hbm_hash").get<std::string>();
        t.provenance_ = j.at("provenance").get<std::string>();
        t.hbm_ = j.at("hbm");
        t.peak_ = j.at("peak_gbs").get<double>();
        for (const auto& r : j.at("rows")) {
            Row row;
            row.bytes = r.at("bytes").get<uint64_t>();
            row.cold_read = r.at("cold_read_ns").get<double>();
            row.cold_write = r.at("cold_write_ns").get<double>();
            const auto& loads = r.at("loads");
            if (loads.size() != 2 * kReadFractions.size())
                throw std::runtime_error("a row has the wrong number of loads");
            for (size_t k = 0; k < loads.size(); ++k) {
                const size_t p = k / kReadFractions.size(), f = k % kReadFractions.size();
                row.unrefreshed[p][f] = loads[k].at("unrefreshed_gbs").get<double>();
                const auto& windows = loads[k].at("windows");
                if (windows.size() != kWindows.size())
                    throw std::runtime_error("a load has the wrong number of windows");
                for (size_t w = 0; w < kWindows.size(); ++w)
                    row.points[p][f][w] = {windows[w].at("bandwidth_gbs").get<double>(),
                                           windows[w].at("read_latency_ns").get<double>()};
                if (PcPattern(p) != PcPattern::Sequential)
                    continue;
                const auto& streams = loads[k].at("streams");
                if (streams.size() != kStreams.size())
                    throw std::runtime_error("a load has the wrong number of stream counts");
                for (size_t s = 0; s < kStreams.size(); ++s) {
                    row.streams[f][s] = streams[s].at("bandwidth_gbs").get<double>();
                    row.streams_unrefreshed[f][s] = streams[s].at("unrefreshed_gbs").get<double>();
                }
            }
            t.rows_.push_back(row);
        }
        if (t.rows_.empty())
            throw std::runtime_error("no rows");
        return t;
    } catch (const nlohmann::json::exception& e) {
        throw std::runtime_error(std::string("flow table: ") + e.what());
    }
}

template <class F> double FlowTable::interpolate(uint64_t bytes, F value) const {
    if (bytes <= rows_.front().bytes)
        return value(rows_.front());
    for (size_t i = 1; i < rows_.size(); ++i)
        if (bytes <= rows_[i].bytes) {
            const double x0 = std::log2(double(rows_[i - 1].bytes)), x1 = std::log2(double(rows_[i].bytes));
            const double a = (std::log2(double(bytes)) - x0) / (x1 - x0);
            return (1 - a) * value(rows_[i - 1]) + a * value(rows_[i]);
        }
    return value(rows_.back());
}

double FlowTable::sustained(uint64_t bytes, PcPattern pattern, bool write, bool with_refresh) const {
    const size_t p = size_t(pattern), f = write ? kReadFractions.size() - 1 : 0;
    return interpolate(bytes, [&](const Row& r) {
        if (!with_refresh)
            return r.unrefreshed[p][f];
        double best = 0;
        for (const Point& x : r.points[p][f])
            best = std::max(best, x.bandwidth);
        return best;
    });
}

double FlowTable::shared_fraction(uint64_t bytes, bool write, uint32_t streams, bool with_refresh) const {
    const size_t f = write ? kReadFractions.size() - 1 : 0;
    const double x = std::log2(double(std::max<uint32_t>(1, streams)));
    return interpolate(bytes, [&](const Row& r) {
        const auto& v = with_refresh ? r.streams[f] : r.streams_unrefreshed[f];
        if (!(v[0] > 0))
            return 1.0;
        for (size_t k = 1; k < kStreams.size(); ++k) {
            const double x0 = std::log2(double(kStreams[k - 1])), x1 = std::log2(double(kStreams[k]));
            if (x <= x1) {
                const double a = (x - x0) / (x1 - x0);
                return ((1 - a) * v[k - 1] + a * v[k]) / v[0];
            }
        }
        return v.back() / v[0];
    });
}

double FlowTable::cold_latency(uint64_t bytes, bool write) const {
    return interpolate(bytes, [&](const Row& r) { return write ? r.cold_write : r.cold_read; });
}

} // namespace nctlm::flow
