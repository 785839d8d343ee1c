// b2b: one read alone (single_op_ns), then N reads posted back to back on one DMA queue;
// ratio = wall ÷ (N x single op). < 0.75 when the channel is released on accept and the HBM
// pseudo-channels alone serialize; ≈ 1 when the channel is held for the round trip.
#pragma once

#include "testbenches/testbench.h"

#include <deque>

namespace nctlm {

struct B2bConfig {
    uint32_t n = 0;
    uint64_t bytes = 0;
    uint32_t tile = 0;
    uint32_t queue = 0;
    static const FieldList<B2bConfig>& fields();
};

class B2bTestbench : public Testbench {
public:
    void configure(const ConfigTree& tree) override;
    void build(Platform& platform) override;
    nlohmann::json results() const override;
    std::string summary() const override;
    uint64_t memory_estimate() const override;

private:
    void traffic(Platform& p);
    B2bConfig cfg_;
    DmaDescriptor single_;
    std::deque<DmaDescriptor> batch_;  // deque: stable addresses
    std::string release_;
};

} // namespace nctlm
