// The kernel program loader and checker: the input is a kernel JSON file (docs/kernels.md), loaded,
// laid out for the tiny platform's PE and walked (bounded: at most 20 000 instructions per
// instance), as `nctlm run -t kernel` does before it runs anything. Only KernelError may come out.
#include "fuzz/fuzz_target.h"
#include "models/common/config.h"
#include "models/kernel/kernel_lowering.h"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

using namespace nctlm;

NCTLM_FUZZ_TARGET(kernel) {
    static const PeConfig pe =
        ConfigTree::from_file(NCTLM_SOURCE_DIR "/configs/platforms/tiny.yaml").load<PeConfig>("pe");
    nlohmann::json j = nlohmann::json::parse(reinterpret_cast<const char*>(data),
                                             reinterpret_cast<const char*>(data) + size, nullptr, false);
    if (j.is_discarded())
        return 0;  // not JSON: the file loader reports it as such
    try {
        kernel::KernelProgram p = kernel::KernelProgram::from_json(j, "fuzz.json");
        kernel::Layout l = kernel::make_layout(p, pe, 4);
        for (uint32_t i = 0; i < l.grid; ++i)
            kernel::check_kernel(p, l, i, pe, {}, 20000);
    } catch (const kernel::KernelError&) {
    }
    return 0;
}
