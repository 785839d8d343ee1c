#include "models/collective/collective_schedule.h"

#include <algorithm>
#include <functional>
#include <map>
#include <stdexcept>

namespace nctlm::collective {

const char* op_name(Operation op) {
    switch (op) {
    case Operation::AllReduce: return "all_reduce";
    case Operation::AllGather: return "all_gather";
    case Operation::ReduceScatter: return "reduce_scatter";
    }
    return "?";
}

const char* algorithm_name(Algorithm a) { return a == Algorithm::Ring ? "ring" : "tree"; }

const char* buffer_name(Buffer b) {
    switch (b) {
    case Buffer::Input: return "input";
    case Buffer::Output: return "output";
    case Buffer::Scratch: return "scratch";
    }
    return "?";
}

std::optional<Operation> parse_op(const std::string& w) {
    if (w == "all_reduce" || w == "allr")
        return Operation::AllReduce;
    if (w == "all_gather" || w == "allg")
        return Operation::AllGather;
    if (w == "reduce_scatter" || w == "redsct")
        return Operation::ReduceScatter;
    return std::nullopt;
}

std::optional<Algorithm> parse_algorithm(const std::string& w) {
    if (w == "ring")
        return Algorithm::Ring;
    if (w == "tree")
        return Algorithm::Tree;
    return std::nullopt;
}

double bus_factor(Operation op, uint32_t n) {
    return (op == Operation::AllReduce ? 2.0 : 1.0) * double(n - 1) / double(n);
}

bool Transfer::remote() const {
    for (const Dest& d : dests)
        if (d.rank != rank)
            return true;
    return false;
}

namespace {

struct Slice {
    uint64_t offset, bytes;
};

// A chunk of `bytes` cut into at most `slices` slices of whole elements.
std::vector<Slice> slices_of(uint64_t bytes, uint32_t elem, uint32_t slices) {
    uint64_t elements = bytes / elem;
    uint64_t n = std::max<uint64_t>(1, std::min<uint64_t>(slices, elements));
    std::vector<Slice> out;
    for (uint64_t j = 0; j < n; ++j) {
        uint64_t a = elements * j / n, b = elements * (j + 1) / n;
        out.push_back({a * elem, (b - a) * elem});
    }
    return out;
}

class Builder {
public:
    explicit Builder(Schedule& s) : s_(s) {}
    uint32_t add(Transfer t) {
        s_.transfers.push_back(std::move(t));
        return uint32_t(s_.transfers.size() - 1);
    }
    Transfer& at(uint32_t id) { return s_.transfers[id]; }

private:
    Schedule& s_;
};

Region in(uint64_t o) { return {Buffer::Input, o}; }
Region out(uint64_t o) { return {Buffer::Output, o}; }
Region scratch(uint64_t o) { return {Buffer::Scratch, o}; }

void ring(Schedule& s) {
    const Spec& sp = s.spec;
    const uint32_t n = sp.ranks;
    const uint64_t C = s.chunk_bytes;
    const std::vector<Slice> sl = slices_of(C, sp.elem_bytes, sp.slices);
    const uint32_t J = uint32_t(sl.size());
    Builder b(s);
    auto up = [n](uint32_t r) { return (r + n - 1) % n; };
    auto down = [n](uint32_t r) { return (r + 1) % n; };
    auto chunk = [n](int64_t c) { return uint64_t(((c % int64_t(n)) + int64_t(n)) % int64_t(n)); };
    // prev[r][j]: the transfer whose data rank r's next step reads (sent to r by up(r)).
    std::vector<std::vector<uint32_t>> prev(n, std::vector<uint32_t>(J)), cur = prev;
    uint32_t step = 0;
    auto next_step = [&] {
        prev = cur;
        ++step;
    };
    // Rank r's transfer of slice j at this step; slices of a step interleave (slice j never waits
    // for slice j + 1).
    auto place = [&](Transfer x, uint32_t r, uint32_t j) {
        x.rank = r;
        x.bytes = sl[j].bytes;
        x.step = step;
        x.round = step * J + j;
        x.slice = j;
        cur[r][j] = b.add(std::move(x));
    };
    if (sp.op == Operation::AllGather) {
        // Step 0: every rank sends its own chunk (and copies it into its own output); step t
        // forwards the chunk it received at step t - 1.
        for (uint32_t t = 0; t + 1 < n; ++t) {
            for (uint32_t r = 0; r < n; ++r)
                for (uint32_t j = 0; j < J; ++j) {
                    Transfer x;
                    uint64_t c = chunk(int64_t(r) - t), o = c * C + sl[j].offset;
                    x.src = t == 0 ? in(sl[j].offset) : out(o);
                    if (t == 0)
                        x.dests.push_back({r, out(o)});
                    else
                        x.after.assign(1, prev[up(r)][j]);
                    x.dests.push_back({down(r), out(o)});
                    place(std::move(x), r, j);
                }
            next_step();
        }
        s.steps = n - 1;
        return;
    }
    // Reduce-scatter: step s, rank r sends chunk r - 1 - s (its own at s = 0, else the partial it
    // received added to its own) into the next rank's scratch slot s.
    for (uint32_t st = 0; st + 1 < n; ++st) {
        for (uint32_t r = 0; r < n; ++r)
            for (uint32_t j = 0; j < J; ++j) {
                Transfer x;
                uint64_t c = chunk(int64_t(r) - 1 - st);
                if (st == 0) {
                    x.src = in(c * C + sl[j].offset);
                } else {
                    x.src = scratch((st - 1) * C + sl[j].offset);
                    x.add = in(c * C + sl[j].offset);
                    x.after.assign(1, prev[up(r)][j]);
                }
                x.dests.push_back({down(r), scratch(st * C + sl[j].offset)});
                place(std::move(x), r, j);
            }
        next_step();
    }
    // The last partial to arrive at rank r is chunk r: add its own, and the chunk is reduced.
    for (uint32_t r = 0; r < n; ++r)
        for (uint32_t j = 0; j < J; ++j) {
            Transfer x;
            x.src = scratch((n - 2) * C + sl[j].offset);
            x.add = in(r * C + sl[j].offset);
            x.after.assign(1, prev[up(r)][j]);
            if (sp.op == Operation::ReduceScatter) {
                x.dests.push_back({r, out(sl[j].offset)});
            } else {
                x.dests.push_back({r, out(r * C + sl[j].offset)});
                x.dests.push_back({down(r), out(r * C + sl[j].offset)});
            }
            place(std::move(x), r, j);
        }
    next_step();
    if (sp.op == Operation::ReduceScatter) {
        s.steps = n - 1;
        return;
    }
    // All-gather of the reduced chunks: step t forwards chunk r - t, received at the step before.
    for (uint32_t t = 1; t + 1 < n; ++t) {
        for (uint32_t r = 0; r < n; ++r)
            for (uint32_t j = 0; j < J; ++j) {
                Transfer x;
                uint64_t o = chunk(int64_t(r) - t) * C + sl[j].offset;
                x.src = out(o);
                x.after.assign(1, prev[up(r)][j]);
                x.dests.push_back({down(r), out(o)});
                place(std::move(x), r, j);
            }
        next_step();
    }
    s.steps = 2 * (n - 1);
}

// The tree over ranks: parent (r - 1) / 2, children 2r + 1 and 2r + 2. Data moves in units (one
// chunk's slice): up the tree (reduced on the way, or gathered), then down from the root. A unit's
// round is its index plus the node's distance from where the unit starts, so every dependency is
// in an earlier round (or earlier on the same rank) and the units pipeline.
void tree(Schedule& s) {
    const Spec& sp = s.spec;
    const uint32_t n = sp.ranks;
    const uint64_t C = s.chunk_bytes, S = C * n;
    const std::vector<Slice> sl = slices_of(C, sp.elem_bytes, sp.slices);
    const uint32_t J = uint32_t(sl.size());
    Builder b(s);
    auto depth = [](uint32_t r) {
        uint32_t d = 0;
        for (r = r + 1; r > 1; r /= 2)
            ++d;
        return d;
    };
    const uint32_t H = depth(n - 1);
    auto children = [n](uint32_t r) {
        std::vector<uint32_t> c;
        for (uint32_t k : {2 * r + 1, 2 * r + 2})
            if (k < n)
                c.push_back(k);
        return c;
    };
    auto in_subtree = [](uint32_t k, uint32_t r) {
        while (k > r)
            k = (k - 1) / 2;
        return k == r;
    };
    auto slot = [](uint32_t child) { return uint64_t((child + 1) % 2); };  // 2r+1 -> 0, 2r+2 -> 1
    const uint64_t kPartial = 2 * S, kDown = 3 * S;
    // Deepest first (up), then shallowest first (down).
    std::vector<uint32_t> deep_first(n);
    for (uint32_t r = 0; r < n; ++r)
        deep_first[r] = r;
    std::stable_sort(deep_first.begin(), deep_first.end(), [&](uint32_t a, uint32_t c) { return depth(a) > depth(c); });
    std::vector<uint32_t> shallow_first(deep_first.rbegin(), deep_first.rend());
    std::stable_sort(shallow_first.begin(), shallow_first.end(),
                     [&](uint32_t a, uint32_t c) { return depth(a) < depth(c); });

    for (uint32_t k = 0; k < n; ++k)
        for (uint32_t j = 0; j < J; ++j) {
            const uint32_t g = k * J + j;  // the unit's place in the pipeline
            const uint64_t o = k * C + sl[j].offset;
            auto add = [&](Transfer x, uint32_t round) {
                x.bytes = sl[j].bytes;
                x.slice = j;
                x.round = round;
                x.step = round - g;
                return b.add(std::move(x));
            };
            auto up_round = [&](uint32_t r) { return g + (H - depth(r)); };
            auto down_round = [&](uint32_t r) { return g + H + 1 + depth(r); };
            if (sp.op == Operation::AllGather) {
                // has[r]: the transfer that put chunk k's slice into r's output.
                std::vector<int64_t> has(n, -1);
                for (uint32_t r : deep_first) {
                    const int p = tree_parent(r);
                    Transfer x;
                    x.rank = r;
                    if (k == r) {  // its own chunk: into its own output and up
                        x.src = in(sl[j].offset);
                        x.dests.push_back({r, out(o)});
                    } else if (p >= 0 && in_subtree(k, r)) {
                        x.src = out(o);
                        x.after.assign(1, uint32_t(has[r]));
                    } else {
                        continue;
                    }
                    if (p >= 0)
                        x.dests.push_back({uint32_t(p), out(o)});
                    uint32_t id = add(std::move(x), up_round(r));
                    if (k == r)
                        has[r] = id;
                    if (p >= 0)
                        has[uint32_t(p)] = id;
                }
                for (uint32_t r : shallow_first) {  // down: to each child that lacks it
                    Transfer x;
                    x.rank = r;
                    x.src = out(o);
                    x.after.assign(1, uint32_t(has[r]));
                    for (uint32_t c : children(r))
                        if (!in_subtree(k, c))
                            x.dests.push_back({c, out(o)});
                    if (x.dests.empty())
                        continue;
                    std::vector<Transfer::Dest> dests = x.dests;
                    uint32_t id = add(std::move(x), down_round(r));
                    for (auto& d : dests)
                        has[d.rank] = id;
                }
                continue;
            }
            // Reduce up: own input + each child's partial, to the parent; the root keeps the
            // reduced unit (all_reduce: its output; reduce_scatter: its output for chunk 0, else
            // scratch until it goes down to chunk k's owner).
            std::vector<int64_t> sent_up(n, -1);  // the transfer that carried r's partial up
            int64_t reduced = -1;                 // the root's last reduction
            const Region kept = sp.op == Operation::AllReduce ? out(o) : (k == 0 ? out(sl[j].offset) : scratch(kDown + o));
            for (uint32_t r : deep_first) {
                const int p = tree_parent(r);
                auto kids = children(r);
                if (kids.empty()) {  // a leaf sends its own input
                    Transfer x;
                    x.rank = r;
                    x.src = in(o);
                    x.dests.push_back({uint32_t(p), scratch(slot(r) * S + o)});
                    sent_up[r] = add(std::move(x), up_round(r));
                    continue;
                }
                Region acc = in(o);
                std::vector<uint32_t> acc_after;
                for (size_t i = 0; i < kids.size(); ++i) {
                    Transfer x;
                    x.rank = r;
                    x.src = scratch(slot(kids[i]) * S + o);
                    x.add = acc;
                    x.after = acc_after;
                    x.after.push_back(uint32_t(sent_up[kids[i]]));
                    const bool last = i + 1 == kids.size();
                    if (!last)
                        x.dests.push_back({r, scratch(kPartial + o)});
                    else if (p >= 0)
                        x.dests.push_back({uint32_t(p), scratch(slot(r) * S + o)});
                    else
                        x.dests.push_back({r, kept});
                    uint32_t id = add(std::move(x), up_round(r));
                    acc = scratch(kPartial + o);
                    acc_after.assign(1, id);
                    if (last)
                        (p >= 0 ? sent_up[r] : reduced) = id;
                }
            }
            // Down: all_reduce broadcasts the reduced unit to every rank's output; reduce_scatter
            // takes it to chunk k's owner only, along the tree.
            std::vector<int64_t> has(n, -1);
            has[0] = reduced;
            for (uint32_t r : shallow_first) {
                if (has[r] < 0)
                    continue;
                Transfer x;
                x.rank = r;
                x.after.assign(1, uint32_t(has[r]));
                if (sp.op == Operation::AllReduce) {
                    x.src = out(o);
                    for (uint32_t c : children(r))
                        x.dests.push_back({c, out(o)});
                } else {
                    if (k == r)
                        continue;  // arrived (in its output)
                    x.src = r == 0 ? kept : scratch(kDown + o);
                    for (uint32_t c : children(r))
                        if (in_subtree(k, c))
                            x.dests.push_back({c, k == c ? out(sl[j].offset) : scratch(kDown + o)});
                }
                if (x.dests.empty())
                    continue;
                std::vector<Transfer::Dest> dests = x.dests;
                uint32_t id = add(std::move(x), down_round(r));
                for (auto& d : dests)
                    has[d.rank] = id;
            }
        }
    s.steps = 2 * H + 1;
}

} // namespace

Schedule make_schedule(const Spec& sp) {
    if (sp.ranks < 2)
        throw std::invalid_argument("a collective needs at least 2 ranks (got " + std::to_string(sp.ranks) + ")");
    if (sp.elem_bytes == 0 || sp.slices == 0)
        throw std::invalid_argument("element size and slices must be at least 1");
    if (sp.bytes == 0 || sp.bytes % (uint64_t(sp.ranks) * sp.elem_bytes) != 0)
        throw std::invalid_argument("size " + std::to_string(sp.bytes) + " B is not a whole number of " +
                                    std::to_string(sp.elem_bytes) + "-byte elements per rank over " +
                                    std::to_string(sp.ranks) + " ranks (size must be a multiple of " +
                                    std::to_string(uint64_t(sp.ranks) * sp.elem_bytes) + " B)");
    Schedule s;
    s.spec = sp;
    s.chunk_bytes = sp.bytes / sp.ranks;
    const uint64_t S = sp.bytes, C = s.chunk_bytes;
    switch (sp.op) {
    case Operation::AllReduce: s.input_bytes = S, s.output_bytes = S; break;
    case Operation::AllGather: s.input_bytes = C, s.output_bytes = S; break;
    case Operation::ReduceScatter: s.input_bytes = S, s.output_bytes = C; break;
    }
    if (sp.algorithm == Algorithm::Ring) {
        s.scratch_bytes = sp.op == Operation::AllGather ? 0 : (sp.ranks - 1) * C;
        ring(s);
    } else {
        s.scratch_bytes = sp.op == Operation::AllGather ? 0 : (sp.op == Operation::ReduceScatter ? 4 : 3) * S;
        tree(s);
    }
    s.by_rank.assign(sp.ranks, {});
    for (uint32_t i = 0; i < s.transfers.size(); ++i)
        s.by_rank[s.transfers[i].rank].push_back(i);
    for (auto& ids : s.by_rank)
        std::stable_sort(ids.begin(), ids.end(),
                         [&](uint32_t a, uint32_t b) { return s.transfers[a].round < s.transfers[b].round; });
    return s;
}

} // namespace nctlm::collective
