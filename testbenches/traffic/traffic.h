// traffic: closed-loop memory traffic for memory-system studies, like a DRAM simulator's trace
// front end. `path: hbm` binds a generator straight to one stack's controller (a private copy
// built from the platform's hbm section); `path: dma` posts descriptors to every tile's DMA
// engine, through the NoC to the tile's local stack. Each generator keeps `window` requests
// outstanding (per stack for hbm, per tile for dma) and issues a new one the moment one
// completes (its last data byte). Figures count requests whose last byte lands in
// [warmup, duration], measured at the stack.
#pragma once

#include "testbenches/testbench.h"

#include <memory>
#include <random>

namespace nctlm {

enum class TrafficPath { Hbm, Dma };
enum class TrafficPattern { Sequential, Random, Strided };

struct TrafficConfig {
    TrafficPath path = TrafficPath::Hbm;
    TrafficPattern pattern = TrafficPattern::Sequential;
    uint64_t request_bytes = 0;
    double read_fraction = 1;
    uint32_t window = 0;
    uint64_t stride = 0;
    uint64_t region = 0;
    Duration duration, warmup;
    uint64_t seed = 0;
    uint32_t stack = 0;
    static const FieldList<TrafficConfig>& fields();
};

// The address and direction of request i (pure; seeded, reproducible).
class TrafficSource {
public:
    TrafficSource(const TrafficConfig& c, uint64_t region_bytes, uint64_t seed);
    struct Request {
        uint64_t offset;  // inside the region
        bool write;
    };
    Request next();

private:
    TrafficConfig cfg_;
    uint64_t region_, slots_, i_ = 0;
    std::mt19937_64 rng_;
};

class TrafficTestbench : public Testbench {
public:
    TrafficTestbench();
    ~TrafficTestbench() override;
    void configure(const ConfigTree& tree) override;
    void build(Platform& platform) override;
    nlohmann::json results() const override;
    std::string summary() const override;
    uint64_t memory_estimate() const override;
    double duration_ns() const override { return cfg_.duration.ns; }

    struct Impl;

private:
    TrafficConfig cfg_;
    uint32_t tiles_ = 1;  // the platform's, for the DMA path's memory estimate
    std::unique_ptr<Impl> impl_;
};

} // namespace nctlm
