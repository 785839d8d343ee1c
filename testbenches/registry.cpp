#include "testbenches/b2b/b2b.h"
#include "testbenches/gemm/gemm.h"
#include "testbenches/host/host.h"
#include "testbenches/probe/probe.h"
#include "testbenches/gqa/gqa.h"
#include "testbenches/stream/stream.h"
#include "testbenches/testbench.h"
#include "testbenches/traffic/traffic.h"

namespace nctlm {

std::string Testbench::summary() const { return results().dump(2); }

const std::vector<TestbenchInfo>& testbenches() {
    static const std::vector<TestbenchInfo> all = {
        {"gemm", "GEMM tiles through the PE pipeline, or a whole GEMM over workload.cores NeuronCores (efficiency, TFLOPS)",
         [] { return std::make_unique<GemmTestbench>(); }},
        {"probe", "one PE->HBM read end to end (latency_ns)", [] { return std::make_unique<ProbeTestbench>(); }},
        {"b2b", "N back-to-back DMA reads vs N x single op (ratio)", [] { return std::make_unique<B2bTestbench>(); }},
        {"host", "n^3 matmuls launched from the host: copies, submissions, kernels on the chip, overlap (ms)",
         [] { return std::make_unique<HostTestbench>(); }},
        {"stream", "every tile streams HBM reads (local/remote/interleaved): GB/s per tile and stack",
         [] { return std::make_unique<StreamTestbench>(); }},
        {"traffic", "closed-loop memory traffic at one stack or through the DMA/NoC: GB/s, latency, row hits",
         [] { return std::make_unique<TrafficTestbench>(); }},
        {"gqa", "one GQA decode step as PE programs on the whole chip: engine busy, bound, vs its roofline",
         [] { return std::make_unique<GqaTestbench>(); }},
    };
    return all;
}

std::unique_ptr<Testbench> make_testbench(const std::string& name) {
    std::vector<std::string> names;
    for (auto& t : testbenches()) {
        if (t.name == name)
            return t.make();
        names.push_back(t.name);
    }
    std::string hint = did_you_mean(name, names), all;
    for (auto& n : names)
        all += (all.empty() ? "" : ", ") + n;
    throw ConfigError("unknown testbench '" + name + "'" + (hint.empty() ? "" : "; did you mean '" + hint + "'?") +
                      " (known: " + all + ")");
}

} // namespace nctlm
