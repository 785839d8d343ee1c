#include "models/common/trace.h"

#include "models/common/atomic_file.h"

#include "models/common/units.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace nctlm {

Trace& Trace::instance() {
    static Trace t;
    return t;
}

void Trace::enable(double window_start_ns, double window_end_ns, size_t max_events) {
    enabled_ = true;
    window_start_ = window_start_ns;
    window_end_ = window_end_ns;
    max_events_ = max_events;
}

int Trace::process_id(const std::string& process) {
    auto pit = std::find(processes_.begin(), processes_.end(), process);
    if (pit == processes_.end()) {
        processes_.push_back(process);
        return int(processes_.size());
    }
    return int(pit - processes_.begin()) + 1;
}

int Trace::track(const std::string& process, const std::string& thread) {
    for (size_t i = 0; i < tracks_.size(); ++i)
        if (tracks_[i].process == process && tracks_[i].thread == thread)
            return int(i);
    tracks_.push_back({process, thread, process_id(process)});
    return int(tracks_.size() - 1);
}

int Trace::counter(const std::string& process, const std::string& name) {
    for (size_t i = 0; i < counters_.size(); ++i)
        if (counters_[i].process == process && counters_[i].name == name)
            return int(i);
    counters_.push_back({process, name, process_id(process)});
    return int(counters_.size() - 1);
}

bool Trace::admit(double start_ns, double end_ns) const {
    return enabled_ && end_ns >= window_start_ && start_ns <= window_end_;
}

void Trace::span(int track, const char* name, double start_ns, double end_ns) {
    span(track, name, start_ns, end_ns, SpanArgs{});
}

void Trace::span(int track, const char* name, double start_ns, double end_ns, const SpanArgs& args) {
    if (track < 0 || !admit(start_ns, end_ns))
        return;
    if (events_.size() >= max_events_) {
        ++dropped_;
        return;
    }
    events_.push_back({track, name, start_ns, end_ns, args});
    if (events_.size() == warn_spans_ && warn_)
        warn_(size_estimate());
}

void Trace::sample(int counter, double t_ns, double value) {
    // Samples have their own cap (the same size) so occupancy cannot crowd out spans.
    if (counter >= 0 && admit(t_ns, t_ns) && samples_.size() < max_events_)
        samples_.push_back({counter, t_ns, value});
}

namespace {
// Trace-event times are microseconds; keep ps precision. Start and end are rounded to ps each
// and dur taken between them, so spans that abut in the model abut in the file (rounding the
// duration on its own can make them overlap by a ps, which viewers show as bad nesting).
long long ps(double ns) { return std::llround(ns * 1e3); }
std::string us(long long ps) {
    return fmt::format("{}{}.{:06}", ps < 0 ? "-" : "", std::llabs(ps) / 1000000, std::llabs(ps) % 1000000);
}
} // namespace

void Trace::write(const std::string& path) const {
    AtomicFile file(path);  // a run killed while writing keeps the previous trace whole
    std::ofstream& out = file.out();
    out << "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
    bool first = true;
    auto emit = [&](const std::string& line) {
        if (!first)
            out << ",\n";
        first = false;
        out << line;
    };

    // Lanes: per track, spans sorted by start go to the first lane that is free again, so no two
    // spans of one lane overlap (greedy interval partitioning: as few lanes as the peak overlap).
    std::vector<std::vector<size_t>> by_track(tracks_.size());
    for (size_t i = 0; i < events_.size(); ++i)
        by_track[events_[i].track].push_back(i);
    std::vector<int> lane_of(events_.size(), 0);
    std::vector<int> lanes(tracks_.size(), 0);
    for (size_t t = 0; t < tracks_.size(); ++t) {
        auto& ids = by_track[t];
        std::stable_sort(ids.begin(), ids.end(), [&](size_t a, size_t b) {
            return ps(events_[a].start) < ps(events_[b].start);
        });
        std::vector<long long> lane_end;
        for (size_t i : ids) {
            long long s = ps(events_[i].start), e = ps(events_[i].end);
            size_t l = 0;
            while (l < lane_end.size() && lane_end[l] > s)
                ++l;
            if (l == lane_end.size())
                lane_end.push_back(e);
            else
                lane_end[l] = e;
            lane_of[i] = int(l);
        }
        lanes[t] = int(lane_end.size());
    }

    // Only processes and (track, lane)s that hold something are written: no empty tracks.
    std::vector<bool> used_process(processes_.size() + 1, false);
    for (size_t t = 0; t < tracks_.size(); ++t)
        if (lanes[t] > 0)
            used_process[tracks_[t].pid] = true;
    for (auto& s : samples_)
        used_process[counters_[s.counter].pid] = true;
    for (size_t p = 1; p <= processes_.size(); ++p)
        if (used_process[p])
            emit(fmt::format(R"({{"ph":"M","name":"process_name","pid":{},"args":{{"name":{}}}}})", p,
                             nlohmann::json(processes_[p - 1]).dump()));
    std::vector<std::vector<int>> tid(tracks_.size());
    std::vector<int> next_tid(processes_.size() + 1, 1);
    for (size_t t = 0; t < tracks_.size(); ++t)
        for (int l = 0; l < lanes[t]; ++l) {
            int id = next_tid[tracks_[t].pid]++;
            tid[t].push_back(id);
            std::string name = l == 0 ? tracks_[t].thread : fmt::format("{} #{}", tracks_[t].thread, l + 1);
            emit(fmt::format(R"({{"ph":"M","name":"thread_name","pid":{},"tid":{},"args":{{"name":{}}}}})",
                             tracks_[t].pid, id, nlohmann::json(name).dump()));
            emit(fmt::format(R"({{"ph":"M","name":"thread_sort_index","pid":{},"tid":{},"args":{{"sort_index":{}}}}})",
                             tracks_[t].pid, id, id));
        }

    // Spans in start order (each track's starts never go back), named with their size, with args.
    std::vector<size_t> by_start(events_.size());
    for (size_t i = 0; i < by_start.size(); ++i)
        by_start[i] = i;
    std::stable_sort(by_start.begin(), by_start.end(),
                     [&](size_t a, size_t b) { return ps(events_[a].start) < ps(events_[b].start); });
    for (size_t i : by_start) {
        const Event& e = events_[i];
        const Track& t = tracks_[e.track];
        const SpanArgs& a = e.args;
        nlohmann::json args = nlohmann::json::object();
        args["command"] = a.command ? a.command : e.name;
        if (a.bytes)
            args["bytes"] = a.bytes;
        if (a.address != SpanArgs::kNone)
            args["address"] = fmt::format("0x{:x}", a.address);
        if (a.descriptor != SpanArgs::kNone)
            args["descriptor"] = a.descriptor;
        if (a.queue >= 0)
            args["queue"] = a.queue;
        if (a.pc >= 0)
            args["pseudo_channel"] = a.pc;
        if (a.tile >= 0)
            args["tile"] = a.tile;
        if (a.instruction >= 0)
            args["instruction"] = a.instruction;
        if (a.flow)
            args["flow"] = a.flow;
        if (a.source)
            args["source"] = a.source;
        if (a.shape[0]) {
            nlohmann::json shape = nlohmann::json::array();
            for (uint32_t d : a.shape)
                if (d)
                    shape.push_back(d);
            args["shape"] = shape;
        }
        std::string name = a.bytes ? fmt::format("{} {}", e.name, format_bytes(a.bytes)) : std::string(e.name);
        long long start = ps(e.start), end = ps(e.end);
        emit(fmt::format(R"({{"ph":"X","name":{},"pid":{},"tid":{},"ts":{},"dur":{},"args":{}}})",
                         nlohmann::json(name).dump(), t.pid, tid[e.track][lane_of[i]], us(start), us(end - start),
                         args.dump()));
    }

    // Flows: per flow id, its whole spans in time order, then one chain per burst (its hops at
    // one address) starting at the latest whole span before it. A chain is linked s -> t... -> f
    // under an id of its own, each step bound to its span 1 ps after the span starts (inside it,
    // so the binding slice encloses it): spans in start order then give steps in time order, which
    // viewers require (Perfetto drops a step earlier than the one before it).
    struct FlowSpans {
        std::vector<size_t> whole;
        std::map<uint64_t, std::vector<size_t>> bursts;  // address -> hops
    };
    std::map<uint64_t, FlowSpans> flows;
    for (size_t i = 0; i < events_.size(); ++i) {
        const SpanArgs& a = events_[i].args;
        if (!a.flow)
            continue;
        if (a.burst)
            flows[a.flow].bursts[a.address].push_back(i);
        else
            flows[a.flow].whole.push_back(i);
    }
    auto by_time = [&](size_t a, size_t b) { return events_[a].start < events_[b].start; };
    uint64_t chain_id = 0;
    auto chain = [&](const std::vector<size_t>& ids) {
        if (ids.size() < 2)
            return;
        ++chain_id;
        long long last = std::numeric_limits<long long>::min();
        for (size_t k = 0; k < ids.size(); ++k) {
            const Event& e = events_[ids[k]];
            const char* ph = k == 0 ? "s" : k + 1 == ids.size() ? "f" : "t";
            long long start = ps(e.start), end = ps(e.end);
            // Never before the previous step; a span shorter than 2 ps binds at its start.
            last = std::max(last, start + (end - start >= 2 ? 1 : 0));
            emit(fmt::format(R"({{"ph":"{}","name":"flow","cat":"flow","id":{},"pid":{},"tid":{},"ts":{},"bp":"e"}})", ph,
                             chain_id, tracks_[e.track].pid, tid[e.track][lane_of[ids[k]]], us(last)));
        }
    };
    for (auto& [flow, f] : flows) {
        // Of two whole spans starting together the enclosing one comes first (the instruction
        // before the descriptor it posted).
        std::stable_sort(f.whole.begin(), f.whole.end(), [&](size_t a, size_t b) {
            const Event &x = events_[a], &y = events_[b];
            return x.start < y.start || (x.start == y.start && x.end > y.end);
        });
        chain(f.whole);
        std::vector<std::vector<size_t>> bursts;
        for (auto& [address, ids] : f.bursts) {
            std::stable_sort(ids.begin(), ids.end(), by_time);
            bursts.push_back(ids);
        }
        std::stable_sort(bursts.begin(), bursts.end(),
                         [&](const auto& a, const auto& b) { return by_time(a.front(), b.front()); });
        for (auto& ids : bursts) {
            // The root: the latest whole span starting no later than the burst's first hop.
            auto root = std::upper_bound(f.whole.begin(), f.whole.end(), ids.front(),
                                         [&](size_t a, size_t b) { return events_[a].start < events_[b].start; });
            if (root != f.whole.begin())
                ids.insert(ids.begin(), *std::prev(root));
            chain(ids);
        }
    }

    // Counters sampled by the models.
    std::vector<size_t> order(samples_.size());
    for (size_t i = 0; i < order.size(); ++i)
        order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return samples_[a].t < samples_[b].t; });
    for (size_t i : order) {
        const Sample& s = samples_[i];
        const Counter& c = counters_[s.counter];
        emit(fmt::format(R"({{"ph":"C","name":{},"pid":{},"ts":{},"args":{{"value":{}}}}})",
                         nlohmann::json(c.name).dump(), c.pid, us(ps(s.t)), nlohmann::json(s.value).dump()));
    }

    // Bandwidth per process: the bytes of its spans, spread evenly over each span, in 200 bins.
    std::map<int, std::vector<size_t>> with_bytes;
    for (size_t i = 0; i < events_.size(); ++i)
        if (events_[i].args.bytes && events_[i].args.bandwidth)
            with_bytes[tracks_[events_[i].track].pid].push_back(i);
    for (auto& [pid, ids] : with_bytes) {
        double lo = 1e300, hi = -1e300;
        for (size_t i : ids) {
            lo = std::min(lo, events_[i].start);
            hi = std::max(hi, events_[i].end);
        }
        if (!(hi > lo))
            continue;
        const int bins = 200;
        double width = (hi - lo) / bins;
        std::vector<double> bytes(bins, 0.0);
        for (size_t i : ids) {
            const Event& e = events_[i];
            double dur = e.end - e.start;
            if (dur <= 0) {
                bytes[std::min(bins - 1, int((e.start - lo) / width))] += double(e.args.bytes);
                continue;
            }
            for (int b = std::max(0, int((e.start - lo) / width)); b < bins; ++b) {
                double b0 = lo + b * width, b1 = b0 + width;
                if (b0 >= e.end)
                    break;
                double overlap = std::min(b1, e.end) - std::max(b0, e.start);
                if (overlap > 0)
                    bytes[b] += double(e.args.bytes) * overlap / dur;
            }
        }
        for (int b = 0; b <= bins; ++b)  // GB/s = bytes per ns; a last 0 closes the step
            emit(fmt::format(R"x({{"ph":"C","name":"bandwidth (GB/s)","pid":{},"ts":{},"args":{{"value":{}}}}})x", pid,
                             us(ps(lo + b * width)), b < bins ? nlohmann::json(bytes[b] / width).dump() : "0"));
    }
    out << "\n],\"otherData\":{\"dropped_events\":" << dropped_ << "}}\n";
    if (!out)
        throw std::runtime_error("error writing trace file " + path);
    file.commit();
}

} // namespace nctlm
