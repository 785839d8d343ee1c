// Chrome/Perfetto trace-event JSON: one track per engine/channel/pseudo-channel, a complete
// ("X") event per span. Bounded by a time window and an event cap so a long run cannot fill
// the disk. Pure C++; times in ns of simulated time.
//
// What the file guarantees a reader (tests/unit/test_trace.cpp, tests/platform/test_trace_file.cpp):
// - spans carry args (command, bytes, address, descriptor, queue, pseudo-channel, tile) and a name
//   with the size ("read 2 KiB");
// - spans sharing a flow id (one descriptor's path) are linked by flow events in time order:
//   the whole spans (PE instruction -> DMA channel) in one chain, and each burst's hops
//   (SpanArgs::burst, grouped by address) in a chain of their own from the DMA channel's span:
//   channel -> NoC links -> HBM PC -> NoC links -> DMA data;
// - no two spans on one displayed track partially overlap: a track whose spans overlap is split
//   into lanes ("channel0", "channel0 #2", ...) at write time;
// - tracks and processes without events are not written;
// - counter tracks: occupancy sampled by the model (counter()) and, per process, the bandwidth
//   of its spans' bytes.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace nctlm {

// What a span is about; every field optional. Strings must be static (no allocation per span).
struct SpanArgs {
    static constexpr uint64_t kNone = std::numeric_limits<uint64_t>::max();
    const char* command = nullptr;  // "read", "write", "matmul"...; default: the span's name
    uint64_t bytes = 0;
    uint64_t address = kNone;
    uint64_t descriptor = kNone;    // DMA descriptor id
    int32_t queue = -1;             // DMA queue
    int32_t pc = -1;                // HBM pseudo-channel
    int32_t tile = -1;
    int64_t instruction = -1;       // index in the PE's program (its program counter)
    uint64_t flow = 0;              // non-zero: links this span to the others of the same flow
    // One burst's hop (NoC link, HBM PC, DMA data): the flow's spans at the same address form a
    // chain of their own, from the flow's latest whole span before it (the DMA channel's).
    bool burst = false;
    bool bandwidth = true;          // counts towards its process's bandwidth counter (data moving)
    const char* source = nullptr;   // where the instruction came from ("softmax.py:12"), kept alive by its program
    uint32_t shape[3] = {0, 0, 0};  // an instruction's sizes (e.g. matmul K, M, N); 0: none
};

class Trace {
public:
    static Trace& instance();
    void enable(double window_start_ns = 0, double window_end_ns = std::numeric_limits<double>::infinity(),
                size_t max_events = 2'000'000);
    bool enabled() const { return enabled_; }
    // A track is a (process, thread) pair in the viewer: process = block, thread = lane.
    int track(const std::string& process, const std::string& thread);
    void span(int track, const char* name, double start_ns, double end_ns);
    void span(int track, const char* name, double start_ns, double end_ns, const SpanArgs& args);
    // A counter track named `name` in `process` (e.g. "queue0 occupancy"); sample(t, value) steps it.
    int counter(const std::string& process, const std::string& name);
    void sample(int counter, double t_ns, double value);
    // A fresh flow id (never 0) for SpanArgs::flow; e.g. one per DMA descriptor.
    uint64_t new_flow() { return ++last_flow_; }
    size_t dropped() const { return dropped_; }  // spans refused by the cap
    // Bytes the file would take now: ~340 B a span with its flow steps and ~80 B a counter sample
    // (measured on a trn1 GEMM trace: 10.3 MB for 30 199 spans, 33 703 flow steps, 20 859 samples).
    size_t size_estimate() const { return events_.size() * kSpanBytes + samples_.size() * kSampleBytes; }
    // Calls `warn(estimate)` once, as soon as the spans alone pass `bytes` (during the run, so a
    // user can stop it and narrow the window); 0 turns it off.
    void warn_above(size_t bytes, std::function<void(size_t)> warn) {
        warn_spans_ = bytes / kSpanBytes;
        warn_ = std::move(warn);
    }
    size_t size() const { return events_.size() + samples_.size(); }
    void write(const std::string& path) const;  // throws std::runtime_error on I/O failure

private:
    struct Track {
        std::string process, thread;
        int pid;
    };
    struct Event {
        int track;
        const char* name;  // static strings only: no allocation per span
        double start, end;
        SpanArgs args;
    };
    struct Counter {
        std::string process, name;
        int pid;
    };
    struct Sample {
        int counter;
        double t, value;
    };
    bool admit(double start_ns, double end_ns) const;
    static constexpr size_t kSpanBytes = 340, kSampleBytes = 80;
    size_t warn_spans_ = 0;
    std::function<void(size_t)> warn_;
    int process_id(const std::string& process);
    bool enabled_ = false;
    double window_start_ = 0, window_end_ = 0;
    size_t max_events_ = 0, dropped_ = 0;
    uint64_t last_flow_ = 0;
    std::vector<Track> tracks_;
    std::vector<std::string> processes_;
    std::vector<Event> events_;
    std::vector<Counter> counters_;
    std::vector<Sample> samples_;
};

inline Trace& trace() { return Trace::instance(); }

// A counter track that costs one branch per sample when tracing is off (opened only with it on).
struct TraceCounter {
    int id = -1;
    void open(const std::string& process, const std::string& name) {
        if (trace().enabled())
            id = trace().counter(process, name);
    }
    void sample(double t_ns, double value) const {
        if (id >= 0)
            trace().sample(id, t_ns, value);
    }
};

} // namespace nctlm
