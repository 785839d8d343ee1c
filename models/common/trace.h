// Chrome/Perfetto trace-event JSON: one track per engine/channel/pseudo-channel, a complete
// ("X") event per span. Bounded by a time window and an event cap so a long run cannot fill
// the disk. Pure C++; times in ns of simulated time.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace nctlm {

class Trace {
public:
    static Trace& instance();
    void enable(double window_start_ns = 0, double window_end_ns = std::numeric_limits<double>::infinity(),
                size_t max_events = 2'000'000);
    bool enabled() const { return enabled_; }
    // A track is a (process, thread) pair in the viewer: process = block, thread = lane.
    int track(const std::string& process, const std::string& thread);
    void span(int track, const char* name, double start_ns, double end_ns);
    size_t dropped() const { return dropped_; }
    size_t size() const { return events_.size(); }
    void write(const std::string& path) const;  // throws std::runtime_error on I/O failure

private:
    struct Track {
        std::string process, thread;
        int pid, tid;
    };
    struct Event {
        int track;
        const char* name;  // static strings only: no allocation per span
        double start, end;
    };
    bool enabled_ = false;
    double window_start_ = 0, window_end_ = 0;
    size_t max_events_ = 0, dropped_ = 0;
    std::vector<Track> tracks_;
    std::vector<std::string> processes_;
    std::vector<Event> events_;
};

inline Trace& trace() { return Trace::instance(); }

} // namespace nctlm
