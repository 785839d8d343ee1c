#include "models/graph/graph_lowering.h"

#include "models/dma/dma_cost.h"
#include "models/link/chip_topology.h"
#include "platforms/shipped_configs.h"

#include <fmt/format.h>
#include <optional>

namespace nctlm::graph {

using json = nlohmann::json;
using kernel::KernelError;
using kernel::KernelProgram;

const KernelProgram& KernelLibrary::get(const std::string& name) {
    auto it = loaded_.find(name);
    if (it != loaded_.end())
        return it->second;
    std::string path = find_config(name, "kernels");
    try {
        return loaded_.emplace(name, KernelProgram::load(path)).first->second;
    } catch (const KernelError& e) {
        throw GraphError(fmt::format("kernel library: {} (configs/kernels/{}.json)", e.what(), name));
    }
}

namespace {

using Args = std::vector<std::pair<std::string, int64_t>>;
// Kernel tensor name -> what it is in the graph; a negative tensor with scratch = true: scratch space.
struct Bind {
    std::string kernel_tensor;
    int tensor = -1;
    uint64_t offset = 0;
};

std::string args_text(const Args& a) {
    std::string s;
    for (auto& [k, v] : a)
        s += fmt::format("{}{}={}", s.empty() ? "" : " ", k, v);
    return s;
}

int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

// The costs the "auto" collective rule weighs for the first replica's ranks (every replica runs
// the same program): the platform's DMA, and over chips the NeuronLink route between each pair.
CollectiveCosts collective_costs(const Placement& pl, const PlatformConfig& pc) {
    CollectiveCosts c;
    c.dma_latency_ns = pc.dma.start_latency.ns;
    c.dma_bytes_per_ns = DmaCostRules::from(pc.dma).peak_rate();  // the engines on full rows (dma_cost.h)
    bool over_chips = false;
    for (uint32_t r = 1; r < pl.tp; ++r)
        over_chips |= pl.chip(r) != pl.chip(0);
    if (!over_chips || pc.platform.chips < 2)
        return c;
    const ChipTopology topo(pc.platform.chips, pc.link);
    c.path.assign(pl.tp, std::vector<CollectivePath>(pl.tp));
    for (uint32_t dst = 0; dst < pl.tp; ++dst)
        for (uint32_t src = 0; src < pl.tp; ++src) {
            CollectivePath& p = c.path[dst][src];
            // The request goes dst -> src; the data comes back over the same cables the other way.
            for (const ChipTopology::Hop& h : topo.route(pl.chip(dst), pl.chip(src)))
                p.wires.push_back(uint64_t(h.chip) * topo.ports() + h.port);
            if (p.wires.empty())
                continue;
            p.latency_ns = 2 * double(p.wires.size()) * pc.link.latency.ns;
            // The wire, or the requests in flight its credits allow (each a DMA burst's read,
            // holding its credit for about one link latency), whichever is narrower.
            p.bytes_per_ns = std::min(pc.link.wire_bandwidth.bytes_per_s / 1e9,
                                      double(pc.link.credits) * double(pc.dma.burst_size) / pc.link.latency.ns);
        }
    return c;
}

class OpLowerer {
public:
    OpLowerer(const Graph& g, const PlatformConfig& pc, KernelLibrary& lib, const GraphOp& op)
        : g_(g), pc_(pc), lib_(lib), op_(op) {}

    [[noreturn]] void fail(const std::string& msg) const {
        throw GraphError(fmt::format("{}: {}: {} op: {}", g_.file, op_.where(), op_.spec().name, msg));
    }
    const GraphTensor& in(const char* role) const { return g_.tensors[size_t(op_.input(role))]; }
    const GraphTensor& out(const char* role) const { return g_.tensors[size_t(op_.output(role))]; }
    static int64_t rows(const GraphTensor& t) {
        int64_t r = 1;
        for (size_t i = 0; i + 1 < t.rank_shape.size(); ++i)
            r *= t.rank_shape[i];
        return r;
    }
    static int64_t cols(const GraphTensor& t) { return t.rank_shape.back(); }
    int64_t per_rank(const char* attr) const { return op_.integer(attr) / int64_t(g_.placement.tp); }

    // The library kernel with `args`, bound to `binds` (unbound kernel tensors become scratch).
    // Empty when it does not fit SBUF/PSUM; `why` then says what failed.
    // One instance per rank of the group: the kernel never reads pid, every rank runs it on its own tensors.
    std::optional<KernelCall> instantiate(const std::string& name, const Args& args, const std::vector<Bind>& binds,
                                          std::string& why) const {
        const uint32_t grid = g_.placement.tp;
        auto program = std::make_shared<KernelProgram>(lib_.get(name));
        kernel::Layout layout;
        try {
            for (auto& [k, v] : args)
                program->set_arg(k, v);
            program->grid = kernel::Expr::constant(grid);
            layout = kernel::make_layout(*program, pc_.pe, grid);
        } catch (const KernelError& e) {
            why = e.what();
            return std::nullopt;
        }
        KernelCall call;
        call.kernel = name;
        call.program = program;
        call.tiling = args_text(args);
        for (size_t t = 0; t < program->tensors.size(); ++t) {
            const std::string& kt = program->tensors[t].name;
            const Bind* b = nullptr;
            for (auto& x : binds)
                if (x.kernel_tensor == kt)
                    b = &x;
            uint64_t bytes = layout.tensors[t].bytes;
            if (!b || b->tensor < 0) {
                call.binds.push_back({-1, 0, int(call.scratch.size())});
                call.scratch.push_back(bytes);
                continue;
            }
            const GraphTensor& gt = g_.tensors[size_t(b->tensor)];
            if (b->offset + bytes > gt.rank_bytes || (b->offset == 0 && bytes != gt.rank_bytes && !views_))
                throw GraphError(fmt::format("{}: {}: kernel {} ({}) tensor '{}' is {} B but graph tensor '{}' holds {} B "
                                             "per rank from byte {}: the lowering bound them wrongly",
                                             g_.file, op_.where(), name, call.tiling, kt, bytes, gt.name, gt.rank_bytes,
                                             b->offset));
            call.binds.push_back({b->tensor, b->offset, -1});
        }
        return call;
    }
    // The first argument set that fits; fails naming the op and the last reason.
    KernelCall first_fit(const std::string& name, const std::vector<Args>& candidates, const std::vector<Bind>& binds) const {
        std::string why;
        for (auto& a : candidates)
            if (auto c = instantiate(name, a, binds, why))
                return *c;
        fail(fmt::format("no tiling of kernel {} fits this platform's SBUF/PSUM ({} candidates tried; the last: {})", name,
                         candidates.size(), why));
    }

    LoweredOp run();

private:
    KernelCall linear(int x, int w, int b, int y, uint64_t x_off, uint64_t w_off, uint64_t y_off, int64_t t, int64_t k,
                      int64_t n, bool weights_partition_major);
    void collective(LoweredOp& lo);
    std::vector<Args> elementwise_tilings(int64_t rows, int64_t c) const;

    const Graph& g_;
    const PlatformConfig& pc_;
    KernelLibrary& lib_;
    const GraphOp& op_;
    bool views_ = false;  // bindings may cover part of a graph tensor (batch_matmul's per-item calls)
};

// Rule (docs/models.md): token blocks TB of up to 512 (the moving side's free size), output blocks NB
// the largest of 512/384/256/128 dividing N, weight blocks of KB rows with KB x NB x 2 B <= 512 KiB
// (enough in flight to hide the DMA start latency), 4 then 3 then 2 rotating weight buffers; the
// first that fits SBUF/PSUM, shrinking TB then NB.
KernelCall OpLowerer::linear(int x, int w, int b, int y, uint64_t x_off, uint64_t w_off, uint64_t y_off, int64_t t,
                             int64_t k, int64_t n, bool wpm) {
    if (k % 128 || n % 128)
        fail(fmt::format("linear of K = {} x N = {}: the kernel (configs/kernels/linear.json) takes K and N in whole "
                         "128-row tiles (pad the model's dimensions)",
                         k, n));
    std::vector<Args> cands;
    for (int64_t tb : {std::min<int64_t>(t, 512), std::min<int64_t>(t, 256), std::min<int64_t>(t, 128)})
        for (int64_t nb : {512, 384, 256, 128}) {
            if (n % nb)
                continue;
            int64_t kb = 128;
            for (int64_t c = k; c >= 128; c -= 128)
                if (k % c == 0 && c * nb * 2 <= 512 * 1024) {
                    kb = c;
                    break;
                }
            for (int64_t bufs : {4, 3, 2})
                cands.push_back({{"T", t}, {"K", k}, {"N", n}, {"TB", tb}, {"NB", nb}, {"KB", kb}, {"WBUFS", bufs},
                                 {"BIAS", b >= 0}, {"WPM", wpm}});
        }
    std::vector<Bind> binds = {{"x", x, x_off}, {"w", w, w_off}, {"y", y, y_off}};
    if (b >= 0)
        binds.push_back({"b", b, 0});
    return first_fit("linear", cands, binds);
}

std::vector<Args> OpLowerer::elementwise_tilings(int64_t r, int64_t c) const {
    std::vector<Args> cands;
    for (int64_t tc = std::min<int64_t>(c, 2048); tc >= 1; --tc)
        if (c % tc == 0) {
            cands.push_back({{"ROWS", r}, {"COLS", c}, {"TC", tc}});
            if (cands.size() >= 4)
                break;
        }
    return cands;
}

void OpLowerer::collective(LoweredOp& lo) {
    const GraphTensor &x = in("x"), &y = out("y");
    const uint32_t n = g_.placement.tp;
    if (n == 1) {
        lo.alias_of = op_.input("x");  // one rank: the result is the input
        return;
    }
    CollectiveSpec s;
    s.ranks = n;
    s.dtype = x.type.name;
    s.elem_bytes = x.type.bytes;
    s.algorithm = op_.attrs.contains("algorithm") ? op_.text("algorithm") : "ring";
    uint64_t whole = 0;
    switch (op_.op) {
    case OpKind::AllReduce: {
        s.kind = Collective::AllReduce;
        uint64_t e = uint64_t(x.rank_elements());
        if (e % n)
            fail(fmt::format("all_reduce of {} elements over {} ranks: the ring moves equal chunks (a multiple of {} "
                             "elements)",
                             e, n, n));
        s.inner = e / n;
        whole = x.rank_bytes;
        break;
    }
    case OpKind::AllGather:
    case OpKind::ReduceScatter: {
        bool gather = op_.op == OpKind::AllGather;
        s.kind = gather ? Collective::AllGather : Collective::ReduceScatter;
        const GraphTensor& sharded = gather ? x : y;
        size_t d = size_t(sharded.split);
        s.outer = 1;
        for (size_t i = 0; i < d; ++i)
            s.outer *= uint64_t(sharded.shape[i]);
        s.inner = 1;
        for (size_t i = d; i < sharded.rank_shape.size(); ++i)
            s.inner *= uint64_t(sharded.rank_shape[i]);
        whole = (gather ? y : x).rank_bytes;
        break;
    }
    case OpKind::SendRecv:
        s.kind = Collective::SendRecv;
        s.inner = uint64_t(x.rank_elements());
        for (auto& p : op_.attrs.at("pairs"))
            s.pairs.push_back({p[0].get<uint32_t>(), p[1].get<uint32_t>()});
        whole = x.rank_bytes;
        break;
    default:
        break;
    }
    if (s.algorithm == "auto")
        s.algorithm = choose_algorithm(s, whole, collective_costs(g_.placement, pc_));
    json j;
    try {
        j = collective_program(s);
    } catch (const GraphError& e) {
        fail(e.what());
    }
    auto program = std::make_shared<KernelProgram>();
    KernelCall call;
    try {
        *program = KernelProgram::from_json(j, fmt::format("<{}: {}>", op_.name, j["name"].get<std::string>()));
        kernel::Layout layout = kernel::make_layout(*program, pc_.pe, n);
        for (size_t t = 0; t < program->tensors.size(); ++t) {
            const std::string& kt = program->tensors[t].name;
            if (kt == "x" || kt == "y") {
                const GraphTensor& gt = kt == "x" ? x : y;
                if (layout.tensors[t].bytes != gt.rank_bytes)
                    fail(fmt::format("collective tensor '{}' is {} B, graph tensor '{}' {} B per rank", kt,
                                     layout.tensors[t].bytes, gt.name, gt.rank_bytes));
                call.binds.push_back({kt == "x" ? op_.input("x") : op_.output("y"), 0, -1});
            } else {
                call.binds.push_back({-1, 0, int(call.scratch.size())});
                call.scratch.push_back(layout.tensors[t].bytes);
            }
        }
    } catch (const KernelError& e) {
        fail(fmt::format("the generated {} program: {}", j["name"].get<std::string>(), e.what()));
    }
    call.kernel = j["name"].get<std::string>();
    call.program = program;
    call.collective = true;
    call.tiling = fmt::format("{} ranks, {} steps, tiles of up to 128 x {} elements", n, collective_steps(s), kMaxFree);
    lo.calls.push_back(call);
    lo.collective = {true, s, whole, collective_steps(s)};
}

LoweredOp OpLowerer::run() {
    LoweredOp lo;
    auto one = [&](KernelCall c) { lo.calls.push_back(std::move(c)); };
    switch (op_.op) {
    case OpKind::Linear: {
        const GraphTensor& w = in("w");
        one(linear(op_.input("x"), op_.input("w"), op_.input("b"), op_.output("y"), 0, 0, 0, rows(in("x")), w.rank_shape[0],
                   w.rank_shape[1], w.kind == TensorKind::Weight));
        break;
    }
    case OpKind::Matmul: {
        const GraphTensor &a = in("a"), &b = in("b");
        one(linear(op_.input("a"), op_.input("b"), -1, op_.output("y"), 0, 0, 0, a.rank_shape[0], a.rank_shape[1],
                   b.rank_shape[1], b.kind == TensorKind::Weight));
        break;
    }
    case OpKind::BatchMatmul: {
        if (op_.flag("transpose_b"))
            fail("transpose_b: the library's matmul kernel (linear.json) reads b as [K, N]; no kernel transposes it "
                 "(import attention as one attention op instead)");
        const GraphTensor &a = in("a"), &b = in("b");
        int64_t batch = a.rank_shape[0], m = a.rank_shape[1], k = a.rank_shape[2], n = b.rank_shape[2];
        views_ = true;
        for (int64_t i = 0; i < batch; ++i)
            one(linear(op_.input("a"), op_.input("b"), -1, op_.output("y"), uint64_t(i * m * k) * a.type.bytes,
                       uint64_t(i * k * n) * b.type.bytes, uint64_t(i * m * n) * a.type.bytes, m, k, n,
                       b.kind == TensorKind::Weight));
        break;
    }
    case OpKind::Attention: {
        const GraphTensor& q = in("q");
        int64_t hq = per_rank("heads"), hkv = per_rank("kv_heads"), b = op_.integer("batch");
        int64_t d = q.rank_shape[1] / hq, s = q.rank_shape[0] / b;
        if (s >= 128 && s % 128)
            fail(fmt::format("sequences of {} tokens: the attention kernel takes tiles of 128 tokens (or one tile "
                             "shorter than 128)",
                             s));
        if (d > 128)
            fail(fmt::format("head size {} > 128 partitions", d));
        bool cache = op_.output("k_cache") >= 0;
        int64_t cmax = cache ? out("k_cache").rank_shape[3] : 128;
        if (cache && cmax % 128)
            fail(fmt::format("cache capacity {}: the caches are laid out in 128-position rows (a multiple of 128)", cmax));
        std::vector<Args> cands;
        for (int64_t kb : {512, 256, 128})
            if (s < 128 ? kb == 128 : s % kb == 0)
                cands.push_back({{"B", b}, {"S", s}, {"HQ", hq}, {"HKV", hkv}, {"D", d}, {"CAUSAL", op_.flag("causal")},
                                 {"KB", s < 128 ? s : kb}, {"CACHE", cache}, {"CMAX", cmax}});
        std::vector<Bind> binds = {{"q", op_.input("q")}, {"k", op_.input("k")}, {"v", op_.input("v")}, {"o", op_.output("o")}};
        if (cache) {
            binds.push_back({"k_cache", op_.output("k_cache")});
            binds.push_back({"v_cache", op_.output("v_cache")});
        }
        one(first_fit("attention", cands, binds));
        break;
    }
    case OpKind::AttentionDecode: {
        const GraphTensor &q = in("q"), &kc = in("k_cache");
        int64_t hq = per_rank("heads"), hkv = per_rank("kv_heads"), b = q.rank_shape[0];
        int64_t d = q.rank_shape[1] / hq, c = op_.integer("context"), cmax = kc.rank_shape[3];
        if (d > 128 || hq > 128)
            fail(fmt::format("head size {} or {} query heads per rank past 128 partitions", d, hq));
        if (cmax % 128)
            fail(fmt::format("cache capacity {}: the caches are laid out in 128-position rows (a multiple of 128)", cmax));
        std::vector<Args> cands;
        for (int64_t vb : {2048, 1024, 512, 256, 128})
            if (vb <= round_up(c, 128) || vb == 128)
                cands.push_back({{"B", b}, {"HQ", hq}, {"HKV", hkv}, {"D", d}, {"C", c}, {"CMAX", cmax}, {"PB", 512},
                                 {"BB", std::min<int64_t>(b, 128 / hq)}, {"VB", vb}});
        one(first_fit("attention_decode", cands,
                      {{"q", op_.input("q")}, {"k", op_.input("k")}, {"v", op_.input("v")}, {"k_cache", op_.input("k_cache")},
                       {"v_cache", op_.input("v_cache")}, {"o", op_.output("o")}}));
        break;
    }
    case OpKind::RmsNorm:
    case OpKind::LayerNorm: {
        bool rms = op_.op == OpKind::RmsNorm;
        std::vector<Bind> binds = {{"x", op_.input("x")}, {"y", op_.output("y")}};
        if (rms)
            binds.push_back({"g", op_.input("w")});
        else
            binds.insert(binds.end(), {{"gamma", op_.input("w")}, {"beta", op_.input("b")}});
        one(first_fit(rms ? "rmsnorm" : "layernorm", {{{"ROWS", rows(in("x"))}, {"COLS", cols(in("x"))}}}, binds));
        break;
    }
    case OpKind::Softmax:
        one(first_fit("softmax", {{{"ROWS", rows(in("x"))}, {"COLS", cols(in("x"))}}},
                      {{"x", op_.input("x")}, {"y", op_.output("y")}}));
        break;
    case OpKind::Add:
        if (in("b").rank_shape.size() == 1 && in("a").rank_shape.size() > 1) {
            one(first_fit("add_row", {{{"ROWS", rows(in("a"))}, {"COLS", cols(in("a"))}}},
                          {{"x", op_.input("a")}, {"b", op_.input("b")}, {"y", op_.output("y")}}));
            break;
        }
        [[fallthrough]];
    case OpKind::Mul: {
        std::vector<Args> cands = elementwise_tilings(rows(in("a")), cols(in("a")));
        for (auto& a : cands)
            a.push_back({"OP", op_.op == OpKind::Add ? 0 : 1});
        one(first_fit("eltwise_binary", cands, {{"a", op_.input("a")}, {"b", op_.input("b")}, {"out", op_.output("y")}}));
        break;
    }
    case OpKind::Silu:
    case OpKind::Gelu:
        one(first_fit(op_.op == OpKind::Silu ? "silu" : "gelu", elementwise_tilings(rows(in("x")), cols(in("x"))),
                      {{"x", op_.input("x")}, {"out", op_.output("y")}}));
        break;
    case OpKind::SiluMul:
        one(first_fit("silu_mul", elementwise_tilings(rows(in("gate")), cols(in("gate"))),
                      {{"gate", op_.input("gate")}, {"up", op_.input("up")}, {"out", op_.output("y")}}));
        break;
    case OpKind::Embedding: {
        const GraphTensor& table = in("table");
        one(first_fit("embedding",
                      {{{"TOKENS", in("ids").rank_shape[0]}, {"V", table.rank_shape[0]}, {"H", table.rank_shape[1]}}},
                      {{"ids", op_.input("ids")}, {"table", op_.input("table")}, {"y", op_.output("y")}}));
        break;
    }
    case OpKind::Rope: {
        const GraphTensor &x = in("x"), &c = in("cos");
        int64_t h = per_rank("heads"), d = x.rank_shape[1] / h, s = op_.integer("seq"), r = x.rank_shape[0];
        if (s > 128 && s % 128)
            fail(fmt::format("seq = {}: the rope kernel takes tiles of 128 tokens of one sequence (or shorter sequences "
                             "whole)",
                             s));
        int64_t tr = s == 1 ? std::min<int64_t>(128, r) : std::min<int64_t>(128, s);
        one(first_fit("rope",
                      {{{"ROWS", r}, {"H", h}, {"D", d}, {"S", s}, {"POS", op_.integer("position")}, {"P", c.rank_shape[0]},
                        {"TR", tr}}},
                      {{"x", op_.input("x")}, {"cos", op_.input("cos")}, {"sin", op_.input("sin")}, {"y", op_.output("y")}}));
        break;
    }
    case OpKind::AllReduce:
    case OpKind::AllGather:
    case OpKind::ReduceScatter:
    case OpKind::SendRecv:
        collective(lo);
        break;
    }
    return lo;
}

} // namespace

Lowering lower_graph(const Graph& g, const PlatformConfig& pc, KernelLibrary& library) {
    const Placement& p = g.placement;
    for (size_t i = 0; i < p.chips.size(); ++i)
        if (p.chips[i] >= pc.platform.chips)
            throw GraphError(fmt::format("{}: /placement/chips/{}: chip {} but platform {} has {} chip{}{}", g.file, i,
                                         p.chips[i], pc.platform.name, pc.platform.chips,
                                         pc.platform.chips == 1 ? "" : "s",
                                         pc.platform.chips == 1 ? " (a multi-chip platform: trn1-16, trn2-16)" : ""));
    for (size_t i = 0; i < p.cores.size(); ++i)
        if (p.cores[i] >= pc.platform.tiles)
            throw GraphError(fmt::format("{}: /placement/cores/{}: core {} but platform {} has {} NeuronCores (tp x dp = "
                                         "{} x {})",
                                         g.file, i, p.cores[i], pc.platform.name, pc.platform.tiles, p.tp, p.dp));
    Lowering l;
    for (int i : g.order) {
        LoweredOp lo = OpLowerer(g, pc, library, g.ops[size_t(i)]).run();
        lo.op = i;
        l.ops.push_back(std::move(lo));
    }
    return l;
}

} // namespace nctlm::graph
