// probe: one PE->HBM read (default 32 KiB to the tile's local stack), end to end.
#pragma once

#include "testbenches/testbench.h"

namespace nctlm {

struct ProbeConfig {
    uint64_t bytes = 0;
    std::string target;  // local | remote
    uint32_t tile = 0;
    uint64_t offset = 0;
    bool write = false;
    static const FieldList<ProbeConfig>& fields();
};

class ProbeTestbench : public Testbench {
public:
    void configure(const ConfigTree& tree) override;
    void build(Platform& platform) override;
    nlohmann::json results() const override;
    std::string summary() const override;

private:
    ProbeConfig cfg_;
    DmaDescriptor desc_;
    uint32_t stack_ = 0;
};

} // namespace nctlm
