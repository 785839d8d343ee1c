#include "models/graph/hbm_plan.h"

#include "models/common/units.h"

#include <algorithm>
#include <fmt/format.h>
#include <map>

namespace nctlm::graph {

namespace {

// First fit over one stack's free space.
class StackAllocator {
public:
    explicit StackAllocator(uint64_t capacity) { free_[0] = capacity; }
    // Offset, or kUnplaced when no free range is large enough.
    uint64_t take(uint64_t size) {
        for (auto it = free_.begin(); it != free_.end(); ++it)
            if (it->second >= size) {
                uint64_t at = it->first, left = it->second - size;
                free_.erase(it);
                if (left)
                    free_[at + size] = left;
                used_ += size;
                peak_ = std::max(peak_, used_);
                return at;
            }
        return kUnplaced;
    }
    void give(uint64_t at, uint64_t size) {
        used_ -= size;
        auto next = free_.lower_bound(at);
        if (next != free_.end() && at + size == next->first) {
            size += next->second;
            next = free_.erase(next);
        }
        if (next != free_.begin()) {
            auto prev = std::prev(next);
            if (prev->first + prev->second == at) {
                prev->second += size;
                return;
            }
        }
        free_[at] = size;
    }
    uint64_t used() const { return used_; }
    uint64_t peak() const { return peak_; }

private:
    std::map<uint64_t, uint64_t> free_;  // offset -> size
    uint64_t used_ = 0, peak_ = 0;
};

} // namespace

HbmPlan plan_hbm(const Graph& g, const Lowering& l, const HbmTarget& t) {
    const uint32_t ranks = g.placement.ranks();
    auto round = [&](uint64_t b) { return (std::max<uint64_t>(b, 1) + t.align - 1) / t.align * t.align; };
    HbmPlan plan;
    plan.tensor.assign(g.tensors.size(), std::vector<uint64_t>(ranks, kUnplaced));
    std::vector<StackAllocator> stacks(t.stacks, StackAllocator(t.capacity));
    // What each stack holds, for the message when something does not fit.
    std::vector<std::map<std::string, uint64_t>> by_kind(t.stacks);
    auto stack_cores = [&](uint32_t s) {
        std::string c;
        for (uint32_t r = 0; r < ranks; ++r)
            if (t.rank_stack[r] == s)
                c += (c.empty() ? "" : ", ") + std::to_string(g.placement.cores[r]);
        return c;
    };
    auto take = [&](uint32_t r, uint64_t bytes, const std::string& what, const std::string& kind) {
        uint32_t s = t.rank_stack[r];
        uint64_t at = stacks[s].take(round(bytes));
        if (at == kUnplaced) {
            std::string held;
            for (auto& [k, v] : by_kind[s])
                held += fmt::format("{}{} {}", held.empty() ? "" : ", ", format_bytes(v), k);
            throw GraphError(fmt::format("{}: {} ({} per rank) does not fit HBM stack {} (cores {}): {} of {} in use{}; "
                                         "the model does not fit: more ranks (placement.tp), a smaller batch or context, "
                                         "or a platform with more HBM",
                                         g.file, what, format_bytes(bytes), s, stack_cores(s),
                                         format_bytes(stacks[s].used()), format_bytes(t.capacity),
                                         held.empty() ? "" : " (" + held + ")"));
        }
        by_kind[s][kind] += round(bytes);
        return at;
    };
    auto give = [&](uint32_t r, uint64_t at, uint64_t bytes, const std::string& kind) {
        stacks[t.rank_stack[r]].give(at, round(bytes));
        by_kind[t.rank_stack[r]][kind] -= round(bytes);
    };
    // Aliases (a one-rank collective's output is its input): the input lives as long as either.
    std::vector<int> alias(g.tensors.size(), -1);
    for (auto& lo : l.ops)
        if (lo.alias_of >= 0)
            alias[size_t(g.ops[size_t(lo.op)].outputs[0])] = lo.alias_of;
    auto root = [&](int tensor) {
        while (alias[size_t(tensor)] >= 0)
            tensor = alias[size_t(tensor)];
        return tensor;
    };
    // Position of each op in the schedule; each tensor's last use.
    std::vector<size_t> pos(g.ops.size());
    for (size_t p = 0; p < l.ops.size(); ++p)
        pos[size_t(l.ops[p].op)] = p;
    const size_t end = l.ops.size();
    std::vector<size_t> last(g.tensors.size(), 0);
    for (size_t i = 0; i < g.tensors.size(); ++i) {
        const GraphTensor& gt = g.tensors[i];
        size_t& e = last[size_t(root(int(i)))];
        if (gt.persistent() || gt.kind == TensorKind::Output || gt.consumers.empty())
            e = std::max(e, gt.persistent() || gt.kind == TensorKind::Output ? end : pos[size_t(gt.producer)]);
        for (int c : gt.consumers)
            e = std::max(e, pos[size_t(c)]);
    }
    // Persistent tensors first, then the schedule's activations and scratch.
    for (size_t i = 0; i < g.tensors.size(); ++i)
        if (g.tensors[i].persistent())
            for (uint32_t r = 0; r < ranks; ++r)
                plan.tensor[i][r] = take(r, g.tensors[i].rank_bytes, fmt::format("tensor '{}' ({})", g.tensors[i].name,
                                                                                  tensor_kind_name(g.tensors[i].kind)),
                                         tensor_kind_name(g.tensors[i].kind));
    for (uint32_t s = 0; s < t.stacks; ++s)
        plan.persistent.push_back(stacks[s].used());
    plan.scratch.resize(l.ops.size());
    for (size_t p = 0; p < l.ops.size(); ++p) {
        const LoweredOp& lo = l.ops[p];
        const GraphOp& op = g.ops[size_t(lo.op)];
        for (int o : op.outputs) {
            if (o < 0 || g.tensors[size_t(o)].persistent())
                continue;
            if (alias[size_t(o)] >= 0) {
                plan.tensor[size_t(o)] = plan.tensor[size_t(root(o))];
                continue;
            }
            for (uint32_t r = 0; r < ranks; ++r)
                plan.tensor[size_t(o)][r] =
                    take(r, g.tensors[size_t(o)].rank_bytes, fmt::format("activation '{}' of op '{}'", g.tensors[size_t(o)].name, op.name),
                         "activations");
        }
        plan.scratch[p].resize(lo.calls.size());
        for (size_t c = 0; c < lo.calls.size(); ++c)
            for (uint64_t bytes : lo.calls[c].scratch) {
                std::vector<uint64_t> at(ranks);
                for (uint32_t r = 0; r < ranks; ++r)
                    at[r] = take(r, bytes, fmt::format("scratch of op '{}' (kernel {})", op.name, lo.calls[c].kernel), "scratch");
                plan.scratch[p][c].push_back(at);
            }
        for (size_t c = 0; c < lo.calls.size(); ++c)
            for (size_t k = 0; k < lo.calls[c].scratch.size(); ++k)
                for (uint32_t r = 0; r < ranks; ++r)
                    give(r, plan.scratch[p][c][k][r], lo.calls[c].scratch[k], "scratch");
        // Free what this op read (or wrote) for the last time.
        std::vector<int> touched(op.inputs.begin(), op.inputs.end());
        touched.insert(touched.end(), op.outputs.begin(), op.outputs.end());
        std::sort(touched.begin(), touched.end());
        touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
        for (int tix : touched) {
            if (tix < 0)
                continue;
            int r0 = root(tix);
            const GraphTensor& gt = g.tensors[size_t(r0)];
            if (gt.persistent() || last[size_t(r0)] != p || plan.tensor[size_t(r0)][0] == kUnplaced)
                continue;
            for (uint32_t r = 0; r < ranks; ++r)
                give(r, plan.tensor[size_t(r0)][r], gt.rank_bytes, "activations");
            last[size_t(r0)] = end + 1;  // freed once
        }
    }
    for (auto& s : stacks)
        plan.peak.push_back(s.peak());
    return plan;
}

} // namespace nctlm::graph
