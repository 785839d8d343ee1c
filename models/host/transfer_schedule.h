// When each part of one host<->device copy happens: pure logic behind PcieLink, unit-tested
// without a kernel. Times in ns of simulated time.
//
// A copy pays a fixed per-transfer latency first (runtime work on the host thread: descriptor
// set-up, doorbell, completion bookkeeping), then its bytes cross the link in chunks of
// `max_payload`. A pageable host tensor goes through the runtime's pinned bounce buffer one chunk
// at a time: the host CPU copies a chunk (memcpy bandwidth) while the DMA moves the previous one,
// so the slower of the two sets the rate. A pinned host tensor is DMA'd directly.
#pragma once

#include "models/common/bandwidth_pipe.h"
#include "models/common/units.h"

#include <cstdint>
#include <utility>
#include <vector>

namespace nctlm {

struct TransferParams {
    Duration latency;         // per transfer, host thread busy
    uint64_t max_payload = 0; // bytes per DMA descriptor / staging chunk
    Bandwidth memcpy;         // host CPU copy into/out of the bounce buffer
};

struct TransferTimes {
    double issue_ns = 0;      // the host starts the copy
    double host_free_ns = 0;  // the issuing host thread may go on
    double link_start_ns = 0; // first byte on the link
    double link_end_ns = 0;   // last byte off the link
    double done_ns = 0;       // data usable at the destination
    uint32_t chunks = 0;
    double memcpy_ns = 0; // host CPU time spent staging
};

// Host -> device. Pageable: the host thread is busy until the last chunk is staged; the data is
// on the device when the last chunk's DMA ends. Pinned: the host is free after the latency.
TransferTimes schedule_h2d(double issue_ns, uint64_t bytes, bool host_pinned, const TransferParams& p,
                           BandwidthPipe& link);
// Device -> host. The host waits for the data: done when the last chunk is DMA'd (pinned) or
// copied out of the bounce buffer (pageable).
TransferTimes schedule_d2h(double issue_ns, uint64_t bytes, bool host_pinned, const TransferParams& p,
                           BandwidthPipe& link);

// Total length covered by a set of [start, end] intervals (overlaps counted once).
double union_length(std::vector<std::pair<double, double>> intervals);

} // namespace nctlm
