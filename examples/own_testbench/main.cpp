// A user-registered testbench: `stride` reads N blocks at a fixed stride from tile 0's local
// stack and reports the bandwidth. Registered before cli_main, it is a first-class testbench:
//   my_sim describe stride           its keys, units, defaults, ranges
//   my_sim run -p trn1 -t stride --set testbench.stride=8KiB -o stats.json
//   my_sim sweep stride_sweep.yaml -o out     (each point re-runs this executable)
#include "apps/nctlm/cli.h"
#include "testbenches/testbench.h"

#include <deque>

using namespace nctlm;

// One field list: YAML keys, --set, validation, `describe` and the JSON Schema all come from it.
struct StrideConfig {
    uint32_t n = 0;
    uint64_t bytes = 0, stride = 0;
    static const FieldList<StrideConfig>& fields() {
        using C = StrideConfig;
        static const FieldList<C> f = {
            count("n", &C::n, "64", 1, 1 << 20, "reads issued, all at once on round-robin queues"),
            nctlm::bytes("bytes", &C::bytes, "2 KiB", 1, 1ull << 30, "size of each read"),
            nctlm::bytes("stride", &C::stride, "4 KiB", 1, 1ull << 30, "address step between reads"),
        };
        return f;
    }
};

class StrideTestbench : public Testbench {
public:
    void configure(const ConfigTree& tree) override {
        cfg_ = tree.load<StrideConfig>("testbench");
        if (cfg_.stride < cfg_.bytes)
            throw ConfigError(tree.where("testbench", "stride") + ": testbench.stride must be >= testbench.bytes");
    }
    void build(Platform& p) override {
        uint64_t base = p.stack_address(p.local_stack(0), 0);
        DmaEngine& dma = p.tiles[0].dma;
        for (uint32_t i = 0; i < cfg_.n; ++i) {
            DmaDescriptor& d = reads_.emplace_back();
            d.address = base + i * cfg_.stride;
            d.bytes = cfg_.bytes;
            d.queue = i % dma.config().queues;
        }
        sc_core::sc_spawn([this, &dma] {
            for (auto& d : reads_)
                dma.post(d);
        });
    }
    nlohmann::json results() const override {
        double first = 1e300, last = 0;
        for (auto& d : reads_) {
            first = std::min(first, d.t_post);
            last = std::max(last, d.t_done);
        }
        return {{"reads", cfg_.n}, {"sim_time_ns", last - first}, {"gbps", cfg_.n * cfg_.bytes / (last - first)}};
    }

private:
    StrideConfig cfg_;
    std::deque<DmaDescriptor> reads_;
};

int sc_main(int argc, char** argv) {
    register_testbench({"stride", "N reads at a fixed stride from tile 0 (GB/s)",
                        [] { return std::make_unique<StrideTestbench>(); },
                        {param_section<StrideConfig>("testbench", "stride testbench: reads and their spacing")}});
    return cli_main(argc, argv);
}
