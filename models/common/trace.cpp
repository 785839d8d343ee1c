#include "models/common/trace.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <fstream>
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

int Trace::track(const std::string& process, const std::string& thread) {
    for (size_t i = 0; i < tracks_.size(); ++i)
        if (tracks_[i].process == process && tracks_[i].thread == thread)
            return int(i);
    auto pit = std::find(processes_.begin(), processes_.end(), process);
    int pid = int(pit - processes_.begin()) + 1;
    if (pit == processes_.end())
        processes_.push_back(process);
    int tid = 1;
    for (auto& t : tracks_)
        tid += t.pid == pid;
    tracks_.push_back({process, thread, pid, tid});
    return int(tracks_.size() - 1);
}

void Trace::span(int track, const char* name, double start_ns, double end_ns) {
    if (!enabled_ || end_ns < window_start_ || start_ns > window_end_)
        return;
    if (events_.size() >= max_events_) {
        ++dropped_;
        return;
    }
    events_.push_back({track, name, start_ns, end_ns});
}

void Trace::write(const std::string& path) const {
    std::ofstream out(path);
    if (!out)
        throw std::runtime_error("cannot write trace file " + path);
    out << "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
    bool first = true;
    auto sep = [&] {
        if (!first)
            out << ",\n";
        first = false;
    };
    for (size_t i = 0; i < processes_.size(); ++i) {
        sep();
        out << fmt::format(R"({{"ph":"M","name":"process_name","pid":{},"args":{{"name":{}}}}})", i + 1,
                           nlohmann::json(processes_[i]).dump());
    }
    for (auto& t : tracks_) {
        sep();
        out << fmt::format(R"({{"ph":"M","name":"thread_name","pid":{},"tid":{},"args":{{"name":{}}}}})", t.pid,
                           t.tid, nlohmann::json(t.thread).dump());
    }
    // Trace-event times are microseconds; keep ps precision. Start and end are rounded to ps each
    // and dur taken between them, so spans that abut in the model abut in the file (rounding the
    // duration on its own can make them overlap by a ps, which viewers show as bad nesting).
    auto ps = [](double ns) { return std::llround(ns * 1e3); };
    for (auto& e : events_) {
        const Track& t = tracks_[e.track];
        sep();
        long long start = ps(e.start), end = ps(e.end);
        out << fmt::format(R"({{"ph":"X","name":"{}","pid":{},"tid":{},"ts":{}.{:06},"dur":{}.{:06}}})", e.name,
                           t.pid, t.tid, start / 1000000, start % 1000000, (end - start) / 1000000,
                           (end - start) % 1000000);
    }
    out << "\n],\"otherData\":{\"dropped_events\":" << dropped_ << "}}\n";
    if (!out)
        throw std::runtime_error("error writing trace file " + path);
}

} // namespace nctlm
