// stream: every tile streams reads from HBM at once, keeping `in_flight` descriptors posted over
// several DMA queues, to its local stack, the next stack on the ring (remote) or the
// stack-interleaved window. Reports achieved GB/s per tile, per stack and for the chip against
// the configured peaks (HBM: stacks x PCs x PC bandwidth; DMA: engines x engine bandwidth).
#pragma once

#include "testbenches/testbench.h"

#include <deque>

namespace nctlm {

struct StreamConfig {
    std::string placement;        // local | remote | interleaved
    uint64_t bytes_per_tile = 0;  // each tile reads this much
    uint64_t descriptor_bytes = 0;
    uint32_t in_flight = 0;       // descriptors posted and not done, per tile
    uint32_t queues = 0;          // DMA queues used per tile (0: all of dma.queues)
    static const FieldList<StreamConfig>& fields();
};

class StreamTestbench : public Testbench {
public:
    void configure(const ConfigTree& tree) override;
    void build(Platform& platform) override;
    nlohmann::json results() const override;
    std::string summary() const override;

private:
    struct Tile {
        uint64_t base = 0, posted = 0;  // next offset to post
        uint64_t done_bytes = 0;
        double first_post = -1, last_done = 0;
        std::deque<DmaDescriptor> slots;  // deque: stable addresses
    };
    void post_next(Platform& p, uint32_t tile, DmaDescriptor& d);

    StreamConfig cfg_;
    std::vector<Tile> tiles_;
    std::vector<std::string> stack_names_;
    std::vector<uint32_t> tile_stack_;  // placement target (interleaved: all)
    double hbm_peak_ = 0, stack_peak_ = 0, dma_peak_ = 0;
};

} // namespace nctlm
