#include "testbenches/b2b/b2b.h"
#include "testbenches/collective/collective.h"
#include "testbenches/gemm/gemm.h"
#include "testbenches/graph/graph.h"
#include "testbenches/host/host.h"
#include "testbenches/kernel/kernel.h"
#include "testbenches/probe/probe.h"
#include "testbenches/gqa/gqa.h"
#include "testbenches/stream/stream.h"
#include "testbenches/testbench.h"
#include "testbenches/traffic/traffic.h"

namespace nctlm {

std::string Testbench::summary() const { return results().dump(2); }

namespace {
std::vector<TestbenchInfo>& registry() {
    static std::vector<TestbenchInfo> all = {
        {"gemm", "GEMM tiles through the PE pipeline, or a whole GEMM over workload.cores NeuronCores (efficiency, TFLOPS)",
         [] { return std::make_unique<GemmTestbench>(); },
         {param_section<GemmTestbenchConfig>("testbench", "gemm testbench: tiles and pipeline options"),
          param_section<GemmWorkload>("workload", "gemm workload: the matrix shape (configs/workloads/gemm_*.yaml)")}},
        {"probe", "one PE->HBM read end to end (latency_ns)", [] { return std::make_unique<ProbeTestbench>(); },
         {param_section<ProbeConfig>("testbench", "probe testbench: one transfer")}},
        {"b2b", "N back-to-back DMA reads vs N x single op (ratio)", [] { return std::make_unique<B2bTestbench>(); },
         {param_section<B2bConfig>("testbench", "b2b testbench: N requests on one queue")}},
        {"host", "n^3 matmuls launched from the host: copies, submissions, kernels on the chip, overlap (ms)",
         [] { return std::make_unique<HostTestbench>(); },
         {param_section<HostWorkload>("workload", "host workload: matmuls launched from the host "
                                                  "(configs/workloads/host_*.yaml)")}},
        {"stream", "every tile streams HBM reads (local/remote/interleaved): GB/s per tile and stack",
         [] { return std::make_unique<StreamTestbench>(); },
         {param_section<StreamConfig>("testbench", "stream testbench: traffic pattern")}},
        {"traffic", "closed-loop memory traffic at one stack or through the DMA/NoC: GB/s, latency, row hits",
         [] { return std::make_unique<TrafficTestbench>(); },
         {param_section<TrafficConfig>("testbench", "traffic testbench: closed-loop memory traffic")}},
        {"gqa", "one GQA decode step as PE programs on the whole chip: engine busy, bound, vs its roofline",
         [] { return std::make_unique<GqaTestbench>(); },
         {param_section<GqaWorkload>("workload", "gqa workload: model shape and KV length "
                                                 "(configs/workloads/gqa_*.yaml)")}},
        {"collective", "all_reduce / all_gather / reduce_scatter over N NeuronCores or chips (ring or tree): time, "
                       "algbw and busbw as nccom-test defines them",
         [] { return std::make_unique<CollectiveTestbench>(); },
         {param_section<CollectiveTestbenchConfig>("testbench", "collective testbench: the collective and its ranks"),
          param_section<CollectiveWorkload>("workload", "collective workload: size and element type")}},
        {"kernel", "a kernel program (docs/kernels.md; -w FILE.json or a shipped kernel) on the NeuronCores' engines: "
                   "wall, engine busy, DMA, HBM GB/s, TFLOPS, the bound",
         [] { return std::make_unique<KernelTestbench>(); },
         {param_section<KernelTestbenchConfig>("testbench", "kernel testbench: where the grid's instances run")},
         true},
        {"graph", "an op graph (docs/models.md; -w GRAPH.json from nctlm model or nctlm import-onnx) as kernels over the "
                  "cores: latency, tokens/s, per-op table, collectives' bus bandwidth",
         [] { return std::make_unique<GraphTestbench>(); },
         {},
         true,
         "graphs"},
    };
    return all;
}
} // namespace

const std::vector<TestbenchInfo>& testbenches() { return registry(); }

void register_testbench(TestbenchInfo info) {
    for (auto& t : registry())
        if (t.name == info.name) {
            t = std::move(info);
            return;
        }
    registry().push_back(std::move(info));
}

const TestbenchInfo* find_testbench(const std::string& name) {
    for (auto& t : registry())
        if (t.name == name)
            return &t;
    return nullptr;
}

std::unique_ptr<Testbench> make_testbench(const std::string& name) {
    if (auto* t = find_testbench(name))
        return t->make();
    std::vector<std::string> names;
    for (auto& t : testbenches())
        names.push_back(t.name);
    std::string hint = did_you_mean(name, names), all;
    for (auto& n : names)
        all += (all.empty() ? "" : ", ") + n;
    throw ConfigError("unknown testbench '" + name + "'" + (hint.empty() ? "" : "; did you mean '" + hint + "'?") +
                      " (known: " + all + ")");
}

} // namespace nctlm
