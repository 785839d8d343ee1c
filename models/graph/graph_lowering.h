// Lowering an op graph onto kernel programs (docs/models.md, "Lowering"): each op becomes one or
// more kernel calls - a library kernel (configs/kernels/NAME.json) with its arguments set by the
// op's tiling rule, or a generated collective (collectives.h) - whose tensors are bound to the
// graph's tensors (per rank, with a byte offset for views) or to scratch space the graph
// allocates. Every call's layout is checked against the platform's SBUF and PSUM here, so a graph
// that cannot run is refused before anything is built. Pure C++.
#pragma once

#include "models/graph/collectives.h"
#include "models/graph/graph.h"
#include "models/kernel/kernel_layout.h"
#include "platforms/platform_config.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace nctlm::graph {

// What a kernel tensor is in the graph: a graph tensor from byte `offset` on, or scratch space.
struct KernelBind {
    int tensor = -1;
    uint64_t offset = 0;
    int scratch = -1;
};

struct KernelCall {
    std::string kernel;  // library kernel name or the generated collective's name
    std::shared_ptr<kernel::KernelProgram> program;  // arguments bound
    std::vector<KernelBind> binds;                    // one per kernel tensor
    std::vector<uint64_t> scratch;                    // bytes per rank of each scratch space
    bool collective = false;                          // the group's ranks run it together (grid = tp)
    std::string tiling;                               // the tiling rule's choice, in words
};

struct CollectiveInfo {
    bool present = false;
    CollectiveSpec spec;
    uint64_t bytes = 0;  // per rank: the whole tensor (nccom-test's size)
    uint32_t steps = 0;
};

struct LoweredOp {
    int op = -1;
    std::vector<KernelCall> calls;
    CollectiveInfo collective;
    int alias_of = -1;  // no kernel: the op's output is its input (a collective over one rank)
};

struct Lowering {
    std::vector<LoweredOp> ops;  // in the graph's schedule order
};

// Kernel programs of the library by name (configs/kernels/NAME.json), loaded once.
class KernelLibrary {
public:
    const kernel::KernelProgram& get(const std::string& name);  // throws GraphError

private:
    std::map<std::string, kernel::KernelProgram> loaded_;
};

// Throws GraphError naming the op (and the kernel) when an op cannot be lowered or its kernel does
// not fit the platform's SBUF/PSUM.
Lowering lower_graph(const Graph& g, const PlatformConfig& pc, KernelLibrary& library);

} // namespace nctlm::graph
