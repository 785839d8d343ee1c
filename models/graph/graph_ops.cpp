// The op table of the graph format, and each op's shape rule on one rank.
#include "models/graph/graph.h"

#include <fmt/format.h>

namespace nctlm::graph {

const char* tensor_kind_name(TensorKind k) {
    switch (k) {
    case TensorKind::Input:
        return "input";
    case TensorKind::Weight:
        return "weight";
    case TensorKind::KvCache:
        return "kv_cache";
    case TensorKind::Activation:
        return "activation";
    case TensorKind::Output:
        return "output";
    }
    return "?";
}

int64_t GraphTensor::rank_elements() const {
    int64_t n = 1;
    for (int64_t d : rank_shape)
        n *= d;
    return n;
}

const std::vector<OpSpec>& op_specs() {
    using A = AttrKind;
    static const OpRole x{"x", true, false, "input [..., features]"}, y{"y", true, false, "output, the shape of x"};
    static const std::vector<OpSpec> specs = {
        {OpKind::Linear, "linear", false, "y = x w (+ b): x [..., K], w [K, N] (a weight), b [N], y [..., N]",
         {x, {"w", true, false, "[K, N]"}, {"b", false, false, "[N] bias"}},
         {{"y", true, false, "[..., N]"}},
         {}},
        {OpKind::Matmul, "matmul", false, "y = a b of two activations: a [M, K], b [K, N], y [M, N]",
         {{"a", true, false, "[M, K]"}, {"b", true, false, "[K, N]"}},
         {{"y", true, false, "[M, N]"}},
         {}},
        {OpKind::BatchMatmul, "batch_matmul", false,
         "y[i] = a[i] b[i]: a [batch, M, K], b [batch, K, N] ([batch, N, K] with transpose_b), y [batch, M, N]",
         {{"a", true, false, "[batch, M, K]"}, {"b", true, false, "[batch, K, N]"}},
         {{"y", true, false, "[batch, M, N]"}},
         {{"transpose_b", A::Bool, "false", "b is given as [batch, N, K]"}}},
        {OpKind::Attention, "attention", false,
         "prefill/encoder attention of `batch` sequences of S tokens: q [batch S, heads D], k and v [batch S, "
         "kv_heads D], o like q (MHA: kv_heads = heads, GQA: a divisor, MQA: 1); with k_cache/v_cache the keys "
         "and values are also written to positions 0..S-1 of the caches",
         {{"q", true, false, "[batch * S, heads * D]"},
          {"k", true, false, "[batch * S, kv_heads * D]"},
          {"v", true, false, "[batch * S, kv_heads * D]"}},
         {{"o", true, false, "[batch * S, heads * D]"},
          {"k_cache", false, false, "[batch, kv_heads, D, capacity] (keys transposed)"},
          {"v_cache", false, false, "[batch, kv_heads, capacity, D]"}},
         {{"heads", A::Integer, nullptr, "query heads"},
          {"kv_heads", A::Integer, nullptr, "key/value heads (divides heads)"},
          {"batch", A::Integer, "1", "sequences"},
          {"causal", A::Bool, "true", "each token attends to the tokens before it only"}}},
        {OpKind::AttentionDecode, "attention_decode", false,
         "one new token per sequence attends to `context` positions of its KV cache; the new k and v are "
         "written at position context - 1 first: q [batch, heads D], k, v [batch, kv_heads D], o like q",
         {{"q", true, false, "[batch, heads * D]"},
          {"k", true, false, "[batch, kv_heads * D]"},
          {"v", true, false, "[batch, kv_heads * D]"},
          {"k_cache", true, true, "[batch, kv_heads, D, capacity] (keys transposed), updated in place"},
          {"v_cache", true, true, "[batch, kv_heads, capacity, D], updated in place"}},
         {{"o", true, false, "[batch, heads * D]"}},
         {{"heads", A::Integer, nullptr, "query heads"},
          {"kv_heads", A::Integer, nullptr, "key/value heads (divides heads)"},
          {"context", A::Integer, nullptr, "positions attended, the new token's included (<= capacity)"}}},
        {OpKind::RmsNorm, "rmsnorm", false, "y = x / sqrt(mean(x^2) + eps) w along the last dimension",
         {x, {"w", true, false, "[features]"}},
         {y},
         {{"eps", A::Number, "1e-5", "added to the mean square"}}},
        {OpKind::LayerNorm, "layernorm", false, "y = (x - mean) / sqrt(var + eps) w + b along the last dimension",
         {x, {"w", true, false, "[features]"}, {"b", true, false, "[features]"}},
         {y},
         {{"eps", A::Number, "1e-12", "added to the variance"}}},
        {OpKind::Rope, "rope", false,
         "rotary position embedding (rotate-half) of `heads` heads of D per token; token t of a sequence of "
         "`seq` tokens is at position `position` + t: x [tokens, heads D], cos and sin tables [positions, D/2]",
         {{"x", true, false, "[tokens, heads * D]"},
          {"cos", true, false, "[positions, D / 2]"},
          {"sin", true, false, "[positions, D / 2]"}},
         {y},
         {{"heads", A::Integer, nullptr, "heads in x"},
          {"seq", A::Integer, "1", "tokens per sequence (1 when decoding)"},
          {"position", A::Integer, "0", "position of each sequence's first token"}}},
        {OpKind::Softmax, "softmax", false, "softmax along the last dimension", {x}, {y}, {}},
        {OpKind::Add, "add", false, "y = a + b: same shapes, or b [a's last dimension] added to every row (a bias)",
         {{"a", true, false, "any shape"}, {"b", true, false, "the shape of a, or [a's last dimension]"}},
         {{"y", true, false, "the shape of a"}},
         {}},
        {OpKind::Mul, "mul", false, "y = a b elementwise (same shapes)",
         {{"a", true, false, "any shape"}, {"b", true, false, "the shape of a"}},
         {{"y", true, false, "the shape of a"}},
         {}},
        {OpKind::Silu, "silu", false, "y = x sigmoid(x)", {x}, {y}, {}},
        {OpKind::Gelu, "gelu", false, "y = gelu(x)", {x}, {y}, {}},
        {OpKind::SiluMul, "silu_mul", false, "y = silu(gate) up (the gated MLP of Llama-style decoders)",
         {{"gate", true, false, "any shape"}, {"up", true, false, "the shape of gate"}},
         {{"y", true, false, "the shape of gate"}},
         {}},
        {OpKind::Embedding, "embedding", false, "y[t] = table[ids[t]]: ids [tokens] int32, table [vocab, H]",
         {{"ids", true, false, "[tokens] int32"}, {"table", true, false, "[vocab, H]"}},
         {{"y", true, false, "[tokens, H]"}},
         {}},
        {OpKind::AllReduce, "all_reduce", true, "y = the sum of x over the ranks of the group (every rank gets it)",
         {{"x", true, false, "any shape, not split"}},
         {{"y", true, false, "the shape of x"}},
         {{"algorithm", A::Algorithm, "\"auto\"", "ring, tree or auto (the cheaper by the step-cost rule, docs/models.md)"}}},
        {OpKind::AllGather, "all_gather", true,
         "y = the ranks' shards of x concatenated along x's split dimension (every rank gets the whole)",
         {{"x", true, false, "split along the gathered dimension"}},
         {{"y", true, false, "x's global shape, not split"}},
         {{"algorithm", A::Algorithm, "\"auto\"", "ring, tree or auto"}}},
        {OpKind::ReduceScatter, "reduce_scatter", true,
         "y = rank r's shard of the sum of x over the ranks (y split along a dimension)",
         {{"x", true, false, "any shape, not split"}},
         {{"y", true, false, "x's global shape, split"}},
         {{"algorithm", A::Algorithm, "\"ring\"", "ring (the only one)"}}},
        {OpKind::SendRecv, "send_recv", true,
         "point to point: for each pair [src, dst] of ranks, rank dst's y = rank src's x (a matched send and "
         "recv; ranks that receive nothing keep y unwritten)",
         {{"x", true, false, "any shape"}},
         {{"y", true, false, "the shape of x"}},
         {{"pairs", A::Pairs, nullptr, "[[src, dst], ...] ranks of the group"}}},
    };
    return specs;
}

const OpSpec& op_spec(OpKind op) {
    for (auto& s : op_specs())
        if (s.op == op)
            return s;
    throw std::logic_error("op_spec: unknown op");
}

int GraphOp::input(const char* role) const {
    const auto& roles = spec().inputs;
    for (size_t i = 0; i < roles.size(); ++i)
        if (std::string(roles[i].name) == role)
            return inputs[i];
    throw std::logic_error(std::string("no input role ") + role);
}

int GraphOp::output(const char* role) const {
    const auto& roles = spec().outputs;
    for (size_t i = 0; i < roles.size(); ++i)
        if (std::string(roles[i].name) == role)
            return outputs[i];
    throw std::logic_error(std::string("no output role ") + role);
}

namespace {

std::string shape_text(const std::vector<int64_t>& s) {
    std::string t = "[";
    for (size_t i = 0; i < s.size(); ++i)
        t += (i ? ", " : "") + std::to_string(s[i]);
    return t + "]";
}

// One op's checks on the per-rank shapes, with messages naming the op and the role.
class ShapeCheck {
public:
    ShapeCheck(const Graph& g, const GraphOp& op) : g_(g), op_(op) {}

    [[noreturn]] void fail(const std::string& msg) const {
        throw GraphError(fmt::format("{}: {}: {} op: {}", g_.file, op_.where(), op_.spec().name, msg));
    }
    const GraphTensor& in(const char* role) const { return g_.tensors[size_t(op_.input(role))]; }
    const GraphTensor& out(const char* role) const { return g_.tensors[size_t(op_.output(role))]; }
    bool has_in(const char* role) const { return op_.input(role) >= 0; }
    bool has_out(const char* role) const { return op_.output(role) >= 0; }
    const std::vector<int64_t>& shape(const GraphTensor& t) const { return t.rank_shape; }
    std::string desc(const char* role, const GraphTensor& t) const {
        return fmt::format("{} '{}' {}{}", role, t.name, shape_text(t.rank_shape),
                           g_.placement.tp > 1 ? " per rank" : "");
    }
    void rank(const char* role, const GraphTensor& t, size_t lo, size_t hi) const {
        if (t.rank_shape.size() < lo || t.rank_shape.size() > hi)
            fail(fmt::format("{} has {} dimension(s), expected {}", desc(role, t), t.rank_shape.size(),
                             lo == hi ? std::to_string(lo) : fmt::format("{} to {}", lo, hi)));
    }
    void same(const char* ra, const GraphTensor& a, const char* rb, const GraphTensor& b) const {
        if (a.rank_shape != b.rank_shape)
            fail(fmt::format("{} and {} differ in shape", desc(ra, a), desc(rb, b)));
    }
    void dim(const char* role, const GraphTensor& t, size_t d, int64_t want, const std::string& what) const {
        if (t.rank_shape.at(d) != want)
            fail(fmt::format("{}: dimension {} is {}, expected {} ({})", desc(role, t), d, t.rank_shape[d], want, what));
    }
    void dtype(const char* role, const GraphTensor& t, const std::string& want) const {
        if (t.type.name != want)
            fail(fmt::format("{} is {}, expected {}", desc(role, t), t.type.name, want));
    }
    void same_dtype(const char* ra, const GraphTensor& a, const char* rb, const GraphTensor& b) const {
        if (a.type.name != b.type.name)
            fail(fmt::format("{} is {} but {} is {}", desc(ra, a), a.type.name, desc(rb, b), b.type.name));
    }
    void floating(const char* role, const GraphTensor& t) const {
        if (t.type.integer)
            fail(desc(role, t) + " is an integer tensor; this op computes on bf16, fp16 or fp32");
    }
    // A head count divided over the tensor-parallel ranks.
    int64_t per_rank(const char* attr) const {
        int64_t v = op_.integer(attr), tp = g_.placement.tp;
        if (v < 1)
            fail(fmt::format("{} = {} must be at least 1", attr, v));
        if (v % tp)
            fail(fmt::format("{} = {} is not divisible by the tensor-parallel degree {} (placement.tp): each rank "
                             "takes a whole number of heads",
                             attr, v, tp));
        return v / tp;
    }
    // Rows of a [..., C] tensor (the product of the leading dimensions).
    static int64_t rows(const GraphTensor& t) {
        int64_t r = 1;
        for (size_t i = 0; i + 1 < t.rank_shape.size(); ++i)
            r *= t.rank_shape[i];
        return r;
    }

    void run() const;

private:
    void attention() const;
    void attention_decode() const;
    void collective() const;
    const Graph& g_;
    const GraphOp& op_;
};

void ShapeCheck::attention() const {
    const GraphTensor &q = in("q"), &k = in("k"), &v = in("v"), &o = out("o");
    for (auto [r, t] : {std::pair<const char*, const GraphTensor*>{"q", &q}, {"k", &k}, {"v", &v}, {"o", &o}}) {
        rank(r, *t, 2, 2);
        floating(r, *t);
    }
    int64_t hq = per_rank("heads"), hkv = per_rank("kv_heads"), batch = op_.integer("batch");
    if (op_.integer("heads") % op_.integer("kv_heads"))
        fail(fmt::format("heads = {} is not a multiple of kv_heads = {}", op_.integer("heads"), op_.integer("kv_heads")));
    if (batch < 1 || q.rank_shape[0] % batch)
        fail(fmt::format("{}: {} tokens are not batch = {} sequences of equal length", desc("q", q), q.rank_shape[0], batch));
    if (q.rank_shape[1] % hq)
        fail(fmt::format("{}: {} columns are not {} heads of equal size", desc("q", q), q.rank_shape[1], hq));
    int64_t d = q.rank_shape[1] / hq, tokens = q.rank_shape[0];
    dim("k", k, 0, tokens, "the tokens of q");
    dim("k", k, 1, hkv * d, "kv_heads x head size per rank");
    same("k", k, "v", v);
    same("q", q, "o", o);
    if (has_out("k_cache") != has_out("v_cache"))
        fail("k_cache and v_cache go together");
    if (has_out("k_cache")) {
        const GraphTensor &kc = out("k_cache"), &vc = out("v_cache");
        rank("k_cache", kc, 4, 4);
        rank("v_cache", vc, 4, 4);
        dim("k_cache", kc, 0, batch, "batch");
        dim("k_cache", kc, 1, hkv, "kv_heads per rank");
        dim("k_cache", kc, 2, d, "head size: keys are stored transposed, [batch, kv_heads, D, capacity]");
        if (kc.rank_shape[3] < tokens / batch)
            fail(fmt::format("{}: capacity {} < the {} tokens of a sequence", desc("k_cache", kc), kc.rank_shape[3],
                             tokens / batch));
        std::vector<int64_t> vs = {batch, hkv, kc.rank_shape[3], d};
        if (vc.rank_shape != vs)
            fail(fmt::format("{}, expected {} ([batch, kv_heads, capacity, D])", desc("v_cache", vc), shape_text(vs)));
    }
}

void ShapeCheck::attention_decode() const {
    const GraphTensor &q = in("q"), &k = in("k"), &v = in("v"), &kc = in("k_cache"), &vc = in("v_cache"), &o = out("o");
    for (auto [r, t] : {std::pair<const char*, const GraphTensor*>{"q", &q}, {"k", &k}, {"v", &v}, {"o", &o}})
        rank(r, *t, 2, 2);
    int64_t hq = per_rank("heads"), hkv = per_rank("kv_heads");
    if (op_.integer("heads") % op_.integer("kv_heads"))
        fail(fmt::format("heads = {} is not a multiple of kv_heads = {}", op_.integer("heads"), op_.integer("kv_heads")));
    if (q.rank_shape[1] % hq)
        fail(fmt::format("{}: {} columns are not {} heads of equal size", desc("q", q), q.rank_shape[1], hq));
    int64_t batch = q.rank_shape[0], d = q.rank_shape[1] / hq;
    dim("k", k, 0, batch, "the batch of q");
    dim("k", k, 1, hkv * d, "kv_heads x head size per rank");
    same("k", k, "v", v);
    same("q", q, "o", o);
    rank("k_cache", kc, 4, 4);
    std::vector<int64_t> ks = {batch, hkv, d, kc.rank_shape[3]}, vs = {batch, hkv, kc.rank_shape[3], d};
    if (kc.rank_shape != ks)
        fail(fmt::format("{}, expected {} ([batch, kv_heads, D, capacity]: keys transposed)", desc("k_cache", kc),
                         shape_text(ks)));
    if (vc.rank_shape != vs)
        fail(fmt::format("{}, expected {} ([batch, kv_heads, capacity, D])", desc("v_cache", vc), shape_text(vs)));
    int64_t ctx = op_.integer("context");
    if (ctx < 1 || ctx > kc.rank_shape[3])
        fail(fmt::format("context = {} must be in 1..{} (the caches' capacity)", ctx, kc.rank_shape[3]));
}

void ShapeCheck::collective() const {
    const GraphTensor &x = in("x"), &y = out("y");
    same_dtype("x", x, "y", y);
    switch (op_.op) {
    case OpKind::AllReduce:
        if (x.split >= 0)
            fail(desc("x", x) + " is split: an all_reduce sums whole tensors (each rank's partial sum)");
        same("x", x, "y", y);
        break;
    case OpKind::AllGather:
        if (x.split < 0)
            fail(desc("x", x) + " is not split: an all_gather concatenates the ranks' shards along x's split dimension");
        if (y.split >= 0)
            fail(desc("y", y) + " is split: an all_gather gives every rank the whole tensor");
        if (x.shape != y.shape)
            fail(fmt::format("x's global shape {} and y's {} differ", shape_text(x.shape), shape_text(y.shape)));
        break;
    case OpKind::ReduceScatter:
        if (x.split >= 0)
            fail(desc("x", x) + " is split: a reduce_scatter sums whole tensors");
        if (y.split < 0)
            fail(desc("y", y) + " is not split: a reduce_scatter leaves each rank its shard");
        if (x.shape != y.shape)
            fail(fmt::format("x's global shape {} and y's {} differ", shape_text(x.shape), shape_text(y.shape)));
        break;
    case OpKind::SendRecv: {
        same("x", x, "y", y);
        const nlohmann::json& pairs = op_.attrs.at("pairs");
        for (size_t i = 0; i < pairs.size(); ++i)
            for (int e = 0; e < 2; ++e) {
                int64_t r = pairs[i][size_t(e)].get<int64_t>();
                if (r < 0 || r >= int64_t(g_.placement.tp))
                    fail(fmt::format("pairs[{}][{}] = {}: ranks of the group are 0..{}", i, e, r, g_.placement.tp - 1));
            }
        break;
    }
    default:
        break;
    }
}

void ShapeCheck::run() const {
    switch (op_.op) {
    case OpKind::Linear: {
        const GraphTensor &x = in("x"), &w = in("w"), &y = out("y");
        rank("x", x, 2, 8);
        rank("w", w, 2, 2);
        floating("x", x);
        same_dtype("x", x, "w", w);
        int64_t k = x.rank_shape.back(), n = w.rank_shape[1];
        dim("w", w, 0, k, "the last dimension of x");
        std::vector<int64_t> ys = x.rank_shape;
        ys.back() = n;
        if (y.rank_shape != ys)
            fail(fmt::format("{}, expected {}", desc("y", y), shape_text(ys)));
        if (has_in("b")) {
            rank("b", in("b"), 1, 1);
            dim("b", in("b"), 0, n, "the columns of w");
        }
        break;
    }
    case OpKind::Matmul: {
        const GraphTensor &a = in("a"), &b = in("b"), &y = out("y");
        rank("a", a, 2, 2);
        rank("b", b, 2, 2);
        floating("a", a);
        same_dtype("a", a, "b", b);
        dim("b", b, 0, a.rank_shape[1], "the columns of a");
        std::vector<int64_t> ys = {a.rank_shape[0], b.rank_shape[1]};
        if (y.rank_shape != ys)
            fail(fmt::format("{}, expected {}", desc("y", y), shape_text(ys)));
        break;
    }
    case OpKind::BatchMatmul: {
        const GraphTensor &a = in("a"), &b = in("b"), &y = out("y");
        rank("a", a, 3, 3);
        rank("b", b, 3, 3);
        floating("a", a);
        same_dtype("a", a, "b", b);
        bool tb = op_.flag("transpose_b");
        dim("b", b, 0, a.rank_shape[0], "the batch of a");
        dim("b", b, tb ? 2 : 1, a.rank_shape[2], "the columns of a");
        std::vector<int64_t> ys = {a.rank_shape[0], a.rank_shape[1], b.rank_shape[tb ? 1 : 2]};
        if (y.rank_shape != ys)
            fail(fmt::format("{}, expected {}", desc("y", y), shape_text(ys)));
        break;
    }
    case OpKind::Attention:
        attention();
        break;
    case OpKind::AttentionDecode:
        attention_decode();
        break;
    case OpKind::RmsNorm:
    case OpKind::LayerNorm: {
        const GraphTensor &x = in("x"), &w = in("w"), &y = out("y");
        rank("x", x, 1, 8);
        floating("x", x);
        same("x", x, "y", y);
        rank("w", w, 1, 1);
        dim("w", w, 0, x.rank_shape.back(), "the last dimension of x");
        if (op_.op == OpKind::LayerNorm) {
            rank("b", in("b"), 1, 1);
            dim("b", in("b"), 0, x.rank_shape.back(), "the last dimension of x");
        }
        break;
    }
    case OpKind::Rope: {
        const GraphTensor &x = in("x"), &c = in("cos"), &s = in("sin"), &y = out("y");
        rank("x", x, 2, 2);
        same("x", x, "y", y);
        int64_t h = per_rank("heads"), seq = op_.integer("seq"), pos = op_.integer("position");
        if (x.rank_shape[1] % h || (x.rank_shape[1] / h) % 2)
            fail(fmt::format("{}: {} columns are not {} heads of an even size", desc("x", x), x.rank_shape[1], h));
        if (seq < 1 || x.rank_shape[0] % seq)
            fail(fmt::format("{}: {} tokens are not whole sequences of seq = {}", desc("x", x), x.rank_shape[0], seq));
        rank("cos", c, 2, 2);
        same("cos", c, "sin", s);
        dim("cos", c, 1, x.rank_shape[1] / h / 2, "half the head size");
        if (pos < 0 || c.rank_shape[0] < pos + seq)
            fail(fmt::format("{}: positions {}..{} are outside the table", desc("cos", c), pos, pos + seq - 1));
        break;
    }
    case OpKind::Softmax:
    case OpKind::Silu:
    case OpKind::Gelu:
        rank("x", in("x"), 1, 8);
        floating("x", in("x"));
        same("x", in("x"), "y", out("y"));
        break;
    case OpKind::Add:
        if (in("b").rank_shape.size() == 1 && in("a").rank_shape.size() > 1) {  // a bias added to every row
            floating("a", in("a"));
            dim("b", in("b"), 0, in("a").rank_shape.back(), "the last dimension of a (a row added to every row)");
            same("a", in("a"), "y", out("y"));
            same_dtype("a", in("a"), "b", in("b"));
            break;
        }
        [[fallthrough]];
    case OpKind::Mul:
        floating("a", in("a"));
        same("a", in("a"), "b", in("b"));
        same("a", in("a"), "y", out("y"));
        same_dtype("a", in("a"), "b", in("b"));
        break;
    case OpKind::SiluMul:
        floating("gate", in("gate"));
        same("gate", in("gate"), "up", in("up"));
        same("gate", in("gate"), "y", out("y"));
        break;
    case OpKind::Embedding: {
        const GraphTensor &ids = in("ids"), &table = in("table"), &y = out("y");
        rank("ids", ids, 1, 1);
        dtype("ids", ids, "int32");
        rank("table", table, 2, 2);
        if (table.split >= 0)
            fail(desc("table", table) + " is split: the embedding table is whole on every rank");
        std::vector<int64_t> ys = {ids.rank_shape[0], table.rank_shape[1]};
        if (y.rank_shape != ys)
            fail(fmt::format("{}, expected {}", desc("y", y), shape_text(ys)));
        same_dtype("table", table, "y", y);
        break;
    }
    case OpKind::AllReduce:
    case OpKind::AllGather:
    case OpKind::ReduceScatter:
    case OpKind::SendRecv:
        collective();
        break;
    }
}

} // namespace

void check_op_shapes(const Graph& g, const GraphOp& op) { ShapeCheck(g, op).run(); }

} // namespace nctlm::graph
