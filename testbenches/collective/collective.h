// collective: one all_reduce, all_gather or reduce_scatter of `workload.size` bytes over N ranks -
// NeuronCores of one chip, or chips joined by NeuronLink, or both - by the ring or tree algorithm
// (models/collective). Every rank runs its part as a program on its NeuronCore: DMA loads from its
// HBM, vector-engine adds, DMA stores into the next rank's HBM (over the NoC and the links), flag
// writes for the cross-rank ordering. Reports the time and the bandwidths exactly as nccom-test
// defines them: algbw = size / time, busbw = algbw x 2(n-1)/n (all_reduce) or (n-1)/n (all_gather,
// reduce_scatter), in GiB/s as nccom-test prints "GB/s" (and in GB/s), next to the closed form of
// the same schedule (models/analytic/collective_model.h, a cross-check only).
#pragma once

#include "models/collective/collective_run.h"
#include "testbenches/resource_use.h"
#include "testbenches/testbench.h"

#include <memory>

namespace nctlm {

struct CollectiveTestbenchConfig {
    collective::Operation op = collective::Operation::AllReduce;
    collective::Algorithm algorithm = collective::Algorithm::Ring;
    uint32_t ranks = 2;
    uint32_t ranks_per_chip = 1;  // 1: one rank per chip; N: N NeuronCores of each chip
    uint32_t first_core = 0, core_stride = 1;
    uint32_t slices = 2;
    uint64_t tile_bytes = 0;        // SBUF bytes per partition of one tile
    uint32_t buffers = 3;
    uint64_t descriptor_bytes = 0;  // CC DMA packet
    uint64_t flag_bytes = 0;
    static const FieldList<CollectiveTestbenchConfig>& fields();
};

struct CollectiveWorkload {
    uint64_t size = 0;
    Dtype dtype = Dtype::Fp32;
    static const FieldList<CollectiveWorkload>& fields();
};

class CollectiveTestbench : public Testbench {
public:
    void configure(const ConfigTree& tree) override;
    void build(Platform& platform) override;
    nlohmann::json results() const override;
    std::string summary() const override;
    uint64_t memory_estimate() const override;

    struct Placement {
        uint32_t chip, tile;
    };
    // Rank r's chip and NeuronCore: chips in the platform's ring order (neighbours adjacent),
    // ranks_per_chip cores of each. Throws ConfigError when the platform is too small.
    static std::vector<Placement> place(const CollectiveTestbenchConfig& c, const PlatformConfig& pc);

private:
    CollectiveTestbenchConfig tb_;
    CollectiveWorkload wl_;
    collective::Spec spec_;
    std::vector<Placement> placement_;
    std::unique_ptr<collective::CollectiveRun> run_;
    std::vector<std::string> link_names_;  // stats names of every link direction
    PlatformConfig pc_;
};

} // namespace nctlm
