// gqa: one decode step (one new token, batch 1) of grouped-query attention over a long KV cache
// on the whole chip. KV heads are sharded over the tiles (split-KV over tiles when there are
// more tiles than heads). Each tile streams its heads' K and V in blocks of `block_tokens`
// (one DMA instruction for K and one for V per block, cut into one 32 KiB descriptor per
// 128-token tile, round robin over the DMA queues), `buffers` blocks in flight. Per block:
// Q.K^T on the tensor engine, online softmax on the vector engine, P.V on the tensor engine,
// O update on the vector engine; costs from models/pe/engine_timing.h via
// models/analytic/roofline.h, software-pipelined one block deep (QK of block i+1 runs before
// PV of block i). A block's buffer is released after its P.V; the next DMA instruction pays
// dma.start_latency. Results sit next to the analytic roofline of the same case.
#pragma once

#include "models/analytic/roofline.h"
#include "testbenches/testbench.h"

#include <deque>
#include <map>

namespace nctlm {

struct GqaWorkload {
    std::string name, model;
    uint32_t query_heads = 0, kv_heads = 0, head_dim = 0;
    uint64_t context = 0;
    std::string dtype;
    uint32_t tile_tokens = 0, block_tokens = 0, buffers = 0;
    std::string kv_placement;  // local | interleaved
    static const FieldList<GqaWorkload>& fields();
};

class GqaTestbench : public Testbench {
public:
    void configure(const ConfigTree& tree) override;
    void build(Platform& platform) override;
    nlohmann::json results() const override;
    std::string summary() const override;

private:
    struct Block {  // one buffer slot: K and V of one block
        std::vector<DmaDescriptor> desc;
        uint32_t used = 0, left = 0;
        double ready = 0;
        sc_core::sc_event done;
    };
    struct Work {
        uint32_t head;  // index among the tile's heads
        uint64_t token0, tokens;
    };
    struct Tile {
        uint64_t base = 0;  // K/V region of this tile
        std::deque<Block> slots;
        std::vector<Work> work;
        DmaDescriptor q, partial;           // Q in; split-KV partial out
        std::deque<DmaDescriptor> o, partial_in;  // O out per head; partials in (owner of a split head)
        sc_core::sc_event misc_done;        // any of the above completed
        double tensor_free = 0, vector_free = 0, tensor_busy = 0, vector_busy = 0;
        double first_data = -1, last_data = 0, done_ns = 0;
        double dma_idle_ns = 0;  // no K/V block in flight while work remained
        uint32_t blocks_in_flight = 0;
        uint64_t queue_rr = 0;
        sc_core::sc_event partial_done;     // (owner) a partial from another tile has landed
        uint32_t partials_left = 0;
        uint64_t misc_base = 0;              // Q, O and partials in the tile's local stack
    };
    void tile_thread(Platform& p, uint32_t t);
    void post_block(Platform& p, uint32_t t, Block& b, const Work& w);
    void post_one(Platform& p, uint32_t t, DmaDescriptor& d);
    void wait_done(Tile& tile, const DmaDescriptor& d);
    uint64_t kv_address(uint32_t t, uint32_t head, bool v, uint64_t token) const;

    GqaWorkload cfg_;
    analytic::GqaShape shape_;
    analytic::GqaRoofline roof_;
    std::deque<Tile> tiles_;  // deque: sc_event members are not movable
    std::vector<std::string> stack_names_, tile_names_, link_names_;
    std::string noc_name_;
    PeConfig pe_;
    DmaConfig dma_;
    double start_latency_ = 0, bytes_ = 0, hbm_peak_ = 0;
    uint64_t slice_bytes_ = 0;  // one head slice of K (or V) on one tile
    uint32_t elt_ = 2;
    // Block costs by token count. A member, not a local of tile_thread: SystemC never unwinds a
    // thread still suspended when the simulation ends, so heap owned by its stack leaked (ASan).
    std::map<uint64_t, analytic::GqaBlockCost> costs_;
};

} // namespace nctlm
