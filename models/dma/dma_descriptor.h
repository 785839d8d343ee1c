#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace nctlm {

// One DMA transfer between HBM and the tile. The poster owns it and keeps it alive until
// `on_complete` has run; the engine fills in the times (ns of simulated time).
struct DmaDescriptor {
    uint64_t address = 0;  // HBM address
    uint64_t bytes = 0;
    bool write = false;    // false: HBM -> tile (read); true: tile -> HBM
    uint32_t queue = 0;
    unsigned char* data = nullptr;  // functional mode: source/destination buffer, else null
    std::function<void(DmaDescriptor&)> on_complete;

    double t_post = -1, t_first_issue = -1, t_last_accept = -1, t_done = -1;
    bool failed = false;
    std::string error;

    // Engine bookkeeping.
    uint64_t id = 0;
    uint64_t trace_flow = 0;  // links its spans in the trace; 0: post() picks a fresh one
    uint32_t bursts_left = 0;
    double last_data_ns = 0;
    int holding_channel = -1;  // channel waiting for completion under on_response
    DmaDescriptor *live_prev = nullptr, *live_next = nullptr;  // the engine's posted-and-not-done list
};

} // namespace nctlm
