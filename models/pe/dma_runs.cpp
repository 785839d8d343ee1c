#include "models/pe/dma_runs.h"

#include <algorithm>

namespace nctlm {

namespace {
// Dimensions [0, outer) enumerate runs; the rest merge into one run of `run` elements.
struct RunSplit {
    int outer;
    uint64_t run;
};

RunSplit split(const DmaPattern& p) {
    int d = int(p.dims) - 1;
    uint64_t run = 1;
    // Skip count-1 dimensions anywhere: they do not break contiguity.
    while (d >= 0 && (p.count[d] == 1 || int64_t(run) == p.stride[d])) {
        run *= p.count[d];
        --d;
    }
    return {d + 1, run};
}
} // namespace

std::pair<uint64_t, uint64_t> dma_run_shape(const Instruction& ins) {
    if (ins.pattern.dims == 0)
        return {ins.bytes, 1};
    RunSplit s = split(ins.pattern);
    uint64_t runs = 1;
    for (int d = 0; d < s.outer; ++d)
        runs *= ins.pattern.count[d];
    return {s.run * ins.pattern.elem_bytes, runs};
}

DmaTransferShape dma_transfer_shape(const Instruction& ins) {
    DmaTransferShape s;
    s.bytes = ins.bytes;
    s.run_bytes = dma_run_shape(ins).first;
    s.partitions = ins.partitions;
    s.first_partition = ins.partition;
    s.transpose = ins.transpose;
    return s;
}

uint64_t dma_descriptor_count(const Instruction& ins, uint64_t chunk) {
    auto [run, runs] = dma_run_shape(ins);
    return runs * ((run + chunk - 1) / chunk);
}

size_t dma_descriptors(const Instruction& ins, uint64_t chunk, std::vector<DmaRun>& out) {
    size_t before = out.size();
    auto cut = [&](uint64_t address, uint64_t bytes) {
        for (uint64_t done = 0; done < bytes; done += chunk)
            out.push_back({address + done, std::min(chunk, bytes - done)});
    };
    if (ins.pattern.dims == 0) {
        cut(ins.address, ins.bytes);
        return out.size() - before;
    }
    const DmaPattern& p = ins.pattern;
    RunSplit s = split(p);
    uint64_t run_bytes = s.run * p.elem_bytes;
    uint64_t index[6] = {};
    while (true) {
        int64_t offset = 0;
        for (int d = 0; d < s.outer; ++d)
            offset += int64_t(index[d]) * p.stride[d];
        cut(ins.address + uint64_t(offset) * p.elem_bytes, run_bytes);
        int d = s.outer - 1;
        while (d >= 0 && ++index[d] == p.count[d])
            index[d--] = 0;
        if (d < 0)
            break;
    }
    return out.size() - before;
}

} // namespace nctlm
