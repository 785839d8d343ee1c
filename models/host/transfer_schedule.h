// When each part of one host<->device copy happens: pure logic behind PcieLink, unit-tested
// without a kernel. Times in ns of simulated time. The mechanisms are the Neuron driver's
// (aws-neuron-driver neuron_cdev.c / neuron_dma.c; docs/models/host.md):
//
// A copy pays a fixed per-transfer latency first (runtime work on the host thread), then its bytes
// cross the link in descriptors of at most `max_payload`; the host sees each DMA's completion
// `descriptor_cost` after it ends (the driver polls a completion marker).
// - Pageable host memory goes through the driver's bounce buffer of one descriptor, serially: to
//   the device, the CPU copies a chunk in, DMAs it, waits; from the device, DMA, wait, copy out.
// - Page-locked (pinned) host memory is DMA'd in place ("zero copy"): the driver pins
//   `pin_batch_pages` pages at a time and pins the next batch while the previous one's DMA runs.
// Both are synchronous for the calling thread: it is free when the last completion is seen.
#pragma once

#include "models/common/bandwidth_pipe.h"
#include "models/common/units.h"

#include <cstdint>
#include <utility>
#include <vector>

namespace nctlm {

struct TransferParams {
    Duration latency;          // per transfer, host thread busy
    uint64_t max_payload = 0;  // bytes per DMA descriptor / bounce buffer
    Duration descriptor_cost;  // DMA end -> completion seen by the host
    Bandwidth copy;            // CPU copy into/out of the bounce buffer (the caller picks the rate)
    uint64_t page_bytes = 0;   // zero copy: pinning unit
    Duration pin_per_page;
    uint32_t pin_batch_pages = 0;
};

struct TransferTimes {
    double issue_ns = 0;      // the host starts the copy
    double host_free_ns = 0;  // the issuing host thread may go on
    double link_start_ns = 0; // first byte on the link
    double link_end_ns = 0;   // last byte off the link
    double done_ns = 0;       // data usable at the destination
    uint32_t chunks = 0;      // descriptors
    double memcpy_ns = 0;     // host CPU time spent copying through the bounce buffer
    double pin_ns = 0;        // host CPU time spent pinning pages
};

// Host -> device of `bytes` from pageable (bounce buffer) or pinned (zero copy) host memory.
TransferTimes schedule_h2d(double issue_ns, uint64_t bytes, bool host_pinned, const TransferParams& p,
                           BandwidthPipe& link);
// Device -> host, likewise.
TransferTimes schedule_d2h(double issue_ns, uint64_t bytes, bool host_pinned, const TransferParams& p,
                           BandwidthPipe& link);

// One host thread's rate for a copy whose buffers total `working_set` bytes: the fraction that
// fits in the LLC share (llc / working_set, at most 1) moves at the LLC rate, the rest at the DRAM
// rate; time per byte is the mix of the two.
Bandwidth copy_rate(uint64_t working_set, uint64_t llc_bytes, Bandwidth llc, Bandwidth dram);

// Total length covered by a set of [start, end] intervals (overlaps counted once).
double union_length(std::vector<std::pair<double, double>> intervals);

} // namespace nctlm
