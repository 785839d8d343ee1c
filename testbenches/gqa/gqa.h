// gqa: one decode step (one new token, batch 1) of grouped-query attention over a long KV cache
// on the whole chip, computed by the PEs' engines. KV heads are sharded over the tiles (split-KV
// over tiles when there are more tiles than heads). The step is a kernel program
// (testbenches/gqa/gqa_kernel.h) launched with one instance per tile through KernelLaunch: K and V
// stream in blocks of `block_tokens` (one contiguous DMA instruction for K and one for V, one
// descriptor per `tile_tokens` tile, spread over the DMA queues), `buffers` blocks in flight;
// Q.K^T, P^T and P.V on the tensor engine, the online softmax on the vector and scalar engines,
// SBUF/PSUM traffic through their ports. A split head's owner merges the other tiles' partials
// (through HBM) after a grid barrier. Results: per-engine
// busy time and instruction counts, the busiest resource (the bound the simulation finds), next
// to the analytic roofline of the same case (models/analytic/roofline.h, a cross-check only).
#pragma once

#include "models/analytic/roofline.h"
#include "testbenches/kernel/kernel_launch.h"
#include "testbenches/resource_use.h"
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
    struct Tile {
        Program program;
        PeRunRecord record;
        std::string pe;  // SystemC name of the tile's PE
    };

    GqaWorkload cfg_;
    analytic::GqaShape shape_;
    analytic::GqaRoofline roof_;
    std::deque<Tile> tiles_;
    KernelLaunch launch_;
    uint32_t blocks_ = 0;  // K/V blocks per tile (the kernel's per-block DMA-in records)
    MemorySystemNames memory_;
    PeConfig pe_;
    double hbm_peak_ = 0;
    uint32_t elt_ = 2;
    Dtype dtype_ = Dtype::Bf16;
    std::string where_block_, where_heads_;  // file:line:col of the keys bad-shape errors point at
};

} // namespace nctlm
