#include "models/pe/instruction.h"

namespace nctlm {

const char* stage_name(Stage s) {
    switch (s) {
    case Stage::Weights:
        return "weights";
    case Stage::DmaIn:
        return "dma_in";
    case Stage::Fetch:
        return "fetch";
    case Stage::Gemm:
        return "gemm";
    case Stage::Evacuate:
        return "evacuate";
    case Stage::WriteBack:
        return "write_back";
    }
    return "?";
}

const char* unit_name(Unit u) {
    static const char* names[kUnits] = {"dma_in", "fetch", "tensor", "vector", "dma_out", "scalar", "sync"};
    return names[int(u)];
}

} // namespace nctlm
