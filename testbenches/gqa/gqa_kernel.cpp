#include "testbenches/gqa/gqa_kernel.h"

#include "models/common/units.h"

#include <cmath>
#include <fmt/format.h>
#include <optional>
#include <stdexcept>

namespace nctlm {

using json = nlohmann::json;
using analytic::GqaBlockShape;

namespace {

uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

// [start, size]; nlohmann's brace initialisation would read a two-element list as an object entry.
json rng(json start, json size) { return json::array({std::move(start), std::move(size)}); }

// An on-chip operand: buffer, copy, optional partition range and free ranges.
json chip(const char* buf, const std::string& copy = "0", std::optional<json> p = std::nullopt,
          std::optional<json> f = std::nullopt) {
    json o = {{"buf", buf}, {"copy", copy}};
    if (p)
        o["p"] = *p;
    if (f)
        o["f"] = *f;
    return o;
}
json rows(uint32_t n) { return rng(0, n); }

json op(const char* name, json fields) {
    fields["op"] = name;
    return fields;
}

json loop(const char* var, uint64_t trip, json body) {
    return {{"loop", var}, {"trip", trip}, {"body", std::move(body)}};
}

json when(const std::string& cond, json body, json orelse = json::array()) {
    json n = {{"if", cond}, {"body", std::move(body)}};
    if (!orelse.empty())
        n["else"] = std::move(orelse);
    return n;
}

void append(json& list, const json& more) {
    for (auto& m : more)
        list.push_back(m);
}

// The layout facts the body needs.
struct Shape {
    uint32_t B = 0, OB = 0;    // K/V slots; staging copies for K and for V
    GqaBlockShape full, tail;  // tail.tiles = 0: every block is full
    uint64_t T = 0, tail_tokens = 0;
    uint32_t nbh = 0;          // blocks per head
    uint32_t head_rows = 0;    // rows the merge covers: a head starts with a full block
    uint32_t qp = 0;           // Q rows loaded at once: every head's (H x G) or one head's
    bool q_per_head = false;
};

std::string problem(const GqaKernelSpec& s, const PeConfig& pe, Shape& sh) {
    sh.B = s.buffers;
    sh.OB = std::max(1u, s.operand_buffers);
    if (s.group == 0 || s.group > pe.sbuf_partitions || s.group > pe.tensor_cols)
        return fmt::format("a group of {} query heads per KV head does not fit the {} partitions / {} array columns "
                           "(at most {})",
                           s.group, pe.sbuf_partitions, pe.tensor_cols,
                           std::min(pe.sbuf_partitions, pe.tensor_cols));
    if (s.head_dim + 2 > pe.moving_max || s.head_dim > pe.tensor_rows || s.head_dim > pe.tensor_cols)
        return fmt::format("head_dim={} exceeds the array ({} rows, {} columns; the merge moves head_dim + 1 columns)",
                           s.head_dim, pe.tensor_rows, pe.tensor_cols);
    if (s.tile_tokens == 0 || s.tile_tokens > pe.tensor_rows || s.tile_tokens > pe.sbuf_partitions)
        return fmt::format("tile_tokens={} exceeds the {} rows a P.V matmul contracts over (at most {})",
                           s.tile_tokens, pe.tensor_rows, std::min(pe.tensor_rows, pe.sbuf_partitions));
    if (s.block_tokens % s.tile_tokens || s.tokens % s.tile_tokens)
        return fmt::format("block_tokens={} and the {} tokens of a slice must be whole tiles of {} tokens",
                           s.block_tokens, s.tokens, s.tile_tokens);
    sh.T = std::min<uint64_t>(s.block_tokens, s.tokens);
    sh.full = analytic::gqa_block_shape(pe.sbuf_partitions, s.group, sh.T, s.tile_tokens);
    sh.nbh = uint32_t(ceil_div(s.tokens, sh.T));
    sh.tail_tokens = s.tokens % sh.T;
    sh.head_rows = sh.full.rows;
    if (sh.tail_tokens) {
        // A tail block keeps the full blocks' chunk length (the staged K's layout), in fewer chunks.
        uint64_t tiles = sh.tail_tokens / s.tile_tokens;
        if (tiles % sh.full.sub)
            return fmt::format("the last block of a slice has {} tokens, not a multiple of a chunk's {} tokens: make "
                               "the slice's {} tokens a multiple of workload.block_tokens or of {}",
                               sh.tail_tokens, sh.full.len, s.tokens, sh.full.len);
        sh.tail = analytic::gqa_tail_shape(sh.full, uint32_t(tiles), s.group);
    }
    sh.q_per_head = uint64_t(s.heads) * s.group > std::min(pe.sbuf_partitions, pe.tensor_rows);
    sh.qp = sh.q_per_head ? s.group : s.heads * s.group;
    const uint64_t bank = pe.psum_bank_bytes();
    if (sh.full.len > pe.moving_max || sh.full.len * 4 > bank)
        return fmt::format("a chunk of {} tokens (a block of {} tokens in {} chunk(s) of {} query rows) needs {} of "
                           "scores per PSUM partition but a PSUM bank holds {} (at most {} tokens, pe.moving_max={}): "
                           "use fewer tokens per block (workload.block_tokens) or a smaller group",
                           sh.full.len, sh.T, sh.full.chunks, s.group, format_bytes(sh.full.len * 4), format_bytes(bank),
                           std::min<uint64_t>(bank / 4, pe.moving_max), pe.moving_max);
    // SBUF per partition, as make_layout() counts it: the K/V slots and everything else.
    const uint32_t e = dtype_bytes(s.dtype), R = sh.full.rows, D = s.head_dim, G = s.group;
    const uint64_t kv_slot = sh.T * e + uint64_t(sh.full.tiles) * D * e;  // one K and one V copy
    uint64_t other = D * e + sh.qp * e                       // qs, qt
                     + 2 * sh.full.len * e + 2 * R * e        // p_sb, pt_sb
                     + 2 * (D + 1) * 4                        // ol
                     + 2 * (D + 2) * 4 + 4 + 2 * D * e;       // part, rl, ob
    if (sh.full.chunks > 1)
        other += 2 * sh.full.chunks * 4 + G * 4 + R * 4 + 4;  // mask, x, sel, selt, w
    if (s.tiles_per_head > 1)
        other += (s.tiles_per_head - 1) * (D + 2) * 4 + s.tiles_per_head * 4 + 4 + (D + 1) * 4;
    uint64_t need = other + s.buffers * kv_slot;
    if (need > pe.sbuf_partition_bytes) {
        uint64_t fit = pe.sbuf_partition_bytes > other ? (pe.sbuf_partition_bytes - other) / kv_slot : 0;
        return fmt::format("workload.buffers={} K/V buffers of {} tokens (workload.block_tokens) need {} per SBUF "
                           "partition but pe.sbuf_partition_bytes={} (at most {} buffers of this block fit)",
                           s.buffers, sh.T, format_bytes(need), format_bytes(pe.sbuf_partition_bytes), fit);
    }
    return "";
}

class Builder {
public:
    Builder(const GqaKernelSpec& s, const Shape& sh) : s_(s), sh_(sh), kv_(dtype_name(s.dtype)) {}
    json build();

private:
    // Block b's head and its index inside the head (expressions of the global block index).
    std::string head(const std::string& b) const { return fmt::format("({}) // {}", b, sh_.nbh); }
    std::string in_head(const std::string& b) const { return fmt::format("({}) % {}", b, sh_.nbh); }
    std::string first(const std::string& b) const { return in_head(b) + " == 0"; }
    std::string last(const std::string& b) const { return fmt::format("{} == {}", in_head(b), sh_.nbh - 1); }
    // The body for a full block, or (if the slice ends in a shorter block) both variants.
    template <class F>
    json shaped(const std::string& b, F f) const {
        if (!sh_.tail.tiles)
            return f(sh_.full);
        return json::array({when(last(b), f(sh_.tail), f(sh_.full))});
    }
    // The first block of a head initializes, the others update.
    template <class F>
    json first_or_not(const std::string& b, F f) const {
        if (sh_.nbh == 1)
            return f(true);
        return json::array({when(first(b), f(true), f(false))});
    }
    json tensors() const;
    json buffers() const;
    json load_q(const std::string& h) const;
    json load_kv(const std::string& b, const GqaBlockShape& k, int which) const;  // 0: K, 1: V
    json qk(const std::string& b, const GqaBlockShape& k) const;
    json softmax(const std::string& b, const GqaBlockShape& k, bool init) const;
    json transpose(const std::string& b, const GqaBlockShape& k) const;
    json pv(const std::string& b, const GqaBlockShape& k) const;
    json update(const std::string& b, const GqaBlockShape& k, bool init) const;
    json merge(const std::string& b) const;  // after block b, the last of its head
    json constants() const;
    json owner_merge() const;
    // Where a head's merged result lies: O and l (head_dim + 1 fp32), and the negated max.
    json result(const std::string& h) const {
        return sh_.full.chunks > 1 ? chip("r_ps", h) : chip("ol", h);
    }
    // Per-row statistics of block b, in PSUM: the vector and scalar engines read them there without
    // queueing behind the fetch's SBUF reads. 0: negated block max, 1: negated running max, 2: row
    // sum of P, 3: the correction exp(m_old - m_new).
    static json stat(int which, const std::string& b, const json& p) {
        return chip("st", b, p, json::array({rng(which, 1)}));
    }
    json neg_max(const std::string& h, const std::string& b) const {
        return sh_.full.chunks > 1 ? chip("part", h, std::nullopt, json::array({rng(s_.head_dim + 1, 1)}))
                                   : stat(1, b, rows(sh_.head_rows));
    }

    const GqaKernelSpec& s_;
    const Shape& sh_;
    std::string kv_;
};

json Builder::tensors() const {
    const uint64_t D = s_.head_dim, G = s_.group, slice = s_.tokens * D;
    auto tensor = [&](const char* name, json shape, const std::string& dtype, const char* kind, json placement,
                      const std::string& offset) {
        json t = {{"name", name}, {"dtype", dtype}, {"kind", kind}, {"per_instance", true}, {"offset", offset}};
        t["shape"] = std::move(shape);
        t["placement"] = std::move(placement);
        return t;
    };
    std::string misc = fmt::format("{} + pid * {}", s_.misc_base, s_.misc_region);
    // K/V of head h: [h][0] K pages (each block's K^T, head_dim rows of its tokens), [h][1] V rows.
    json t = json::array({tensor("kv", {s_.heads, 2, slice}, kv_, "input", s_.interleaved ? "interleaved" : "local",
                                 fmt::format("pid * {}", s_.kv_region)),
                          tensor("q", {uint64_t(s_.heads) * G, D}, kv_, "input", "local", misc),
                          tensor("o", {uint64_t(s_.heads) * G, D}, kv_, "output", "local", misc + " + 65536")});
    if (s_.tiles_per_head > 1)
        t.push_back(tensor("partial", {G, D + 2}, "fp32", "scratch", "local", misc + " + 131072"));
    return t;
}

json Builder::buffers() const {
    const uint32_t D = s_.head_dim, G = s_.group, R = sh_.full.rows, tt = s_.tile_tokens, C = sh_.full.chunks;
    auto buf = [](const char* name, const char* memory, uint32_t partitions, json shape, const std::string& dtype,
                  uint32_t bufs) {
        json b = {{"name", name}, {"memory", memory}, {"partitions", partitions}, {"dtype", dtype}, {"bufs", bufs}};
        b["shape"] = std::move(shape);
        return b;
    };
    json b = json::array({
        buf("qs", "sbuf", sh_.qp, {D}, kv_, 1),
        buf("qt_ps", "psum", D, {sh_.qp}, kv_, 1),
        buf("qt", "sbuf", D, {sh_.qp}, kv_, 1),
        buf("k_in", "sbuf", D, {tt, sh_.full.tiles}, kv_, sh_.B),
        buf("v_in", "sbuf", tt, {sh_.full.tiles, D}, kv_, sh_.B),
        buf("k_st", "staging", D, {tt, C, sh_.full.sub}, kv_, sh_.OB),
        buf("v_st", "staging", tt, {sh_.full.tiles, D}, kv_, sh_.OB),
        buf("s_ps", "psum", R, {tt, sh_.full.sub}, "fp32", 2),
        buf("p_sb", "sbuf", R, {tt, sh_.full.sub}, kv_, 2),
        buf("pt_ps", "psum", tt, {R}, kv_, 2),
        buf("pt_sb", "sbuf", tt, {R}, kv_, 2),
        buf("pv_ps", "psum", R, {D}, "fp32", 2),
        buf("st", "psum", R, {4}, "fp32", 2),
        buf("ol", "sbuf", R, {D + 1}, "fp32", 2),
        buf("part", "sbuf", G, {D + 2}, "fp32", 2),
        buf("rl", "sbuf", G, {1}, "fp32", 1),
        buf("ob", "sbuf", G, {D}, kv_, 2),
    });
    if (C > 1) {
        append(b, json::array({buf("mask", "sbuf", R, {C}, "fp32", 1), buf("sel", "sbuf", R, {G}, "fp32", 1),
                               buf("selt", "sbuf", G, {R}, "fp32", 1), buf("x", "sbuf", R, {C}, "fp32", 1),
                               buf("mg_ps", "psum", R, {C + 1}, "fp32", 1),
                               buf("w", "sbuf", R, {1}, "fp32", 1), buf("r_ps", "psum", G, {D + 1}, "fp32", 2)}));
    }
    if (s_.tiles_per_head > 1) {
        uint32_t k = s_.tiles_per_head;
        append(b, json::array({buf("pin", "sbuf", G, {k - 1, D + 2}, "fp32", 1), buf("a", "sbuf", G, {k}, "fp32", 1),
                               buf("nmtot", "sbuf", G, {1}, "fp32", 1), buf("acc", "sbuf", G, {D + 1}, "fp32", 1)}));
    }
    return b;
}

// Q rows (every head's, or head h's) in, transposed through the array, scaled by 1/sqrt(head_dim)
// on their way to SBUF: Q^T, the stationary operand of Q.K^T.
json Builder::load_q(const std::string& h) const {
    const uint64_t D = s_.head_dim, rows = sh_.qp;
    std::string offset = sh_.q_per_head ? fmt::format("({}) * {}", h, rows * D) : "0";
    return json::array({
        op("dma", {{"dst", chip("qs")},
                   {"src", {{"tensor", "q"}, {"offset", offset}, {"ap", json::array({rng(D, rows), rng(1, D)})}}},
                   {"queue", 0},
                   {"spread", false},
                   {"tile", 0}}),
        op("transpose", {{"dst", chip("qt_ps")}, {"src", chip("qs")}}),
        op("tensor_scalar", {{"dst", chip("qt")}, {"src", chip("qt_ps")}, {"operator0", "multiply"},
                             {"operand0", 1.0 / std::sqrt(double(D))}}),
    });
}

// The block's K^T page (head_dim rows of its tokens) and V page (its tokens' rows), each one
// contiguous run, one descriptor per K/V tile, spread over the queues.
json Builder::load_kv(const std::string& b, const GqaBlockShape& k, int which) const {
    const uint64_t D = s_.head_dim, tt = s_.tile_tokens, tokens = uint64_t(k.tiles) * tt, slice = s_.tokens * D;
    const uint64_t desc = tt * D * dtype_bytes(s_.dtype);
    auto page = [&](int v) {
        return fmt::format("{} * {} + {} * {}", head(b), 2 * slice, in_head(b), sh_.T * D) +
               (v ? fmt::format(" + {}", slice) : "");
    };
    json kdst = chip("k_in", b, std::nullopt, json::array({rng(0, tt), rng(0, k.tiles)}));
    json vdst = chip("v_in", b, std::nullopt, json::array({rng(0, k.tiles), rng(0, D)}));
    auto dma = [&](json dst, int v, json ap) {
        return op("dma", {{"dst", std::move(dst)},
                          {"src", {{"tensor", "kv"}, {"offset", page(v)}, {"ap", std::move(ap)}}},
                          {"queue", 0},
                          {"prebuilt", true},
                          {"descriptor_bytes", desc},
                          {"tile", b}});
    };
    if (which == 0)
        return json::array({dma(kdst, 0, json::array({rng(tokens, D), rng(1, tokens)}))});
    return json::array({dma(vdst, 1, json::array({rng(k.tiles * D, tt), rng(1, k.tiles * D)}))});
}

// Q.K^T: chunk c's tokens (one per partition p: p x tiles + c x sub + s) against its G query rows.
json Builder::qk(const std::string& b, const GqaBlockShape& k) const {
    const uint32_t G = s_.group, tt = s_.tile_tokens;
    json fetch = op("fetch", {{"src", chip("k_in", b, std::nullopt, json::array({rng(0, tt), rng(0, k.tiles)}))},
                              {"dst", chip("k_st", b, std::nullopt,
                                           json::array({rng(0, tt), rng(0, k.chunks), rng(0, k.sub)}))}});
    std::string qcol = sh_.q_per_head ? "0" : fmt::format("{} * {}", head(b), G);
    json mm = op("matmul", {{"dst", chip("s_ps", b, rng(fmt::format("c * {}", G), G))},
                            {"stationary", chip("qt", "0", std::nullopt, json::array({rng(qcol, G)}))},
                            {"moving", chip("k_st", b, std::nullopt, json::array({rng(0, tt), rng("c", 1), rng(0, k.sub)}))}});
    return json::array({fetch, loop("c", k.chunks, json::array({mm}))});
}

// Online softmax: negated block max, running max, P = exp(s - m) with its row sum, correction.
json Builder::softmax(const std::string& b, const GqaBlockShape& k, bool init) const {
    const json p = rows(k.rows);
    const std::string prev = fmt::format("({}) - 1", b), h = head(b);
    json out = json::array();
    out.push_back(op("tensor_reduce", {{"reduce", "max"}, {"negate", true}, {"dst", stat(init ? 1 : 0, b, p)},
                                       {"src", chip("s_ps", b, p)}}));
    if (!init) {
        out.push_back(op("tensor_tensor", {{"operator", "min"}, {"dst", stat(1, b, p)}, {"in0", stat(1, prev, p)},
                                           {"in1", stat(0, b, p)}}));
        if (k.rows < sh_.head_rows) {  // rows without tokens in this block keep their running max
            json rest = rng(k.rows, sh_.head_rows - k.rows);
            out.push_back(op("tensor_copy", {{"dst", stat(1, b, rest)}, {"src", stat(1, prev, rest)}}));
        }
    }
    json l = chip("ol", h, p, json::array({rng(s_.head_dim, 1)}));
    out.push_back(op("activation", {{"func", "exp"}, {"dst", chip("p_sb", b, p)}, {"src", chip("s_ps", b, p)},
                                    {"bias", stat(1, b, p)}, {"reduce", init ? l : stat(2, b, p)}}));
    if (!init) {
        out.push_back(op("activation", {{"func", "exp"}, {"dst", stat(3, b, p)}, {"src", stat(1, prev, p)},
                                        {"scale", -1}, {"bias", stat(1, b, p)}}));
        out.push_back(op("tensor_scalar", {{"dst", l}, {"src", l}, {"operator0", "multiply"},
                                           {"operand0", stat(3, b, p)}, {"operator1", "add"},
                                           {"operand1", stat(2, b, p)}}));
    }
    return out;
}

// P^T through the array (identity matmuls into PSUM), then to SBUF, where the array reads it.
json Builder::transpose(const std::string& b, const GqaBlockShape& k) const {
    const uint32_t tt = s_.tile_tokens;
    std::string copy = fmt::format("({}) * {} + s", b, sh_.full.sub);
    json cols = json::array({rng(0, k.rows)});
    return json::array({loop("s", k.sub, json::array({
        op("transpose", {{"dst", chip("pt_ps", copy, std::nullopt, cols)},
                         {"src", chip("p_sb", b, rows(k.rows), json::array({rng(0, tt), rng("s", 1)}))}}),
        op("activation", {{"func", "copy"}, {"dst", chip("pt_sb", copy, std::nullopt, cols)},
                          {"src", chip("pt_ps", copy, std::nullopt, cols)}}),
    }))});
}

// P.V: chunk c's G rows of P^T against its V rows, accumulated over the chunk's tiles.
json Builder::pv(const std::string& b, const GqaBlockShape& k) const {
    const uint32_t G = s_.group, D = s_.head_dim, sub = sh_.full.sub;
    json fetch = op("fetch", {{"src", chip("v_in", b, std::nullopt, json::array({rng(0, k.tiles), rng(0, D)}))},
                              {"dst", chip("v_st", b, std::nullopt, json::array({rng(0, k.tiles), rng(0, D)}))}});
    json mm = op("matmul", {{"dst", chip("pv_ps", b, rng(fmt::format("c * {}", G), G))},
                            {"stationary", chip("pt_sb", fmt::format("({}) * {} + s", b, sub), std::nullopt,
                                                json::array({rng(fmt::format("c * {}", G), G)}))},
                            {"moving", chip("v_st", b, std::nullopt,
                                            json::array({rng(fmt::format("c * {} + s", sub), 1), rng(0, D)}))},
                            {"start", "s == 0"},
                            {"stop", fmt::format("s == {}", sub - 1)}});
    return json::array({fetch, loop("c", k.chunks, json::array({loop("s", sub, json::array({mm}))}))});
}

// O = O x corr + P.V, or O = P.V for a head's first block.
json Builder::update(const std::string& b, const GqaBlockShape& k, bool init) const {
    const json p = rows(k.rows);
    json o = chip("ol", head(b), p, json::array({rng(0, s_.head_dim)}));
    if (init)
        return json::array({op("tensor_copy", {{"dst", o}, {"src", chip("pv_ps", b, p)}})});
    return json::array({op("tensor_scalar", {{"dst", o}, {"src", o}, {"operator0", "multiply"},
                                             {"operand0", stat(3, b, p)}}),
                        op("tensor_tensor", {{"operator", "add"}, {"dst", o}, {"in0", o}, {"in1", chip("pv_ps", b, p)}})});
}

// The selection constants of the chunk merge (row r = (chunk c, query g) of the packed layout):
// mask[r][c'] = (c == c'), sel[r][g'] = (g == g'), selt[g'][r] = (g == g').
json Builder::constants() const {
    json out = json::array();
    const uint32_t G = s_.group;
    for (auto [name, expr] : {std::pair<const char*, std::string>{"mask", fmt::format("p // {} - f", G)},
                              {"sel", fmt::format("p % {} - f", G)},
                              {"selt", fmt::format("f % {} - p", G)}}) {
        out.push_back(op("iota", {{"dst", chip(name)}, {"expr", expr}}));
        out.push_back(op("tensor_scalar", {{"dst", chip(name)}, {"src", chip(name)}, {"operator0", "is_equal"},
                                           {"operand0", 0}}));
    }
    return out;
}

// After block b, the last of its head: merge the chunks onto G rows, then write O (or, on a split
// head's partner, the partial; an owner keeps it for owner_merge()).
json Builder::merge(const std::string& b) const {
    const uint32_t G = s_.group, D = s_.head_dim, R = sh_.head_rows;
    const std::string h = head(b);
    const json p = rows(R);
    json out = json::array();
    if (sh_.full.chunks > 1) {
        // Each row's -max into its chunk's column, gathered per query row: [G x chunks]; the
        // smallest is the head's -max, broadcast back to the rows; each chunk's weight exp(m_c - m).
        json nmax = chip("part", h, std::nullopt, json::array({rng(D + 1, 1)}));
        json nmt = chip("mg_ps", "0", rows(G), json::array({rng(0, sh_.full.chunks)}));
        json nmb = chip("mg_ps", "0", p, json::array({rng(sh_.full.chunks, 1)}));
        append(out, json::array({
            op("tensor_scalar", {{"dst", chip("x", "0", p)}, {"src", chip("mask", "0", p)}, {"operator0", "multiply"},
                                 {"operand0", stat(1, b, p)}}),
            op("matmul", {{"dst", nmt}, {"stationary", chip("sel", "0", p)}, {"moving", chip("x", "0", p)}}),
            op("tensor_reduce", {{"reduce", "min"}, {"dst", nmax}, {"src", nmt}}),
            op("matmul", {{"dst", nmb},
                          {"stationary", chip("selt", "0", std::nullopt, json::array({rng(0, R)}))},
                          {"moving", nmax}}),
            op("activation", {{"func", "exp"}, {"dst", chip("w", "0", p)}, {"src", stat(1, b, p)}, {"scale", -1},
                              {"bias", nmb}}),
            op("tensor_scalar", {{"dst", chip("ol", h, p)}, {"src", chip("ol", h, p)}, {"operator0", "multiply"},
                                 {"operand0", chip("w", "0", p)}}),
            op("matmul", {{"dst", chip("r_ps", h)}, {"stationary", chip("sel", "0", p)}, {"moving", chip("ol", h, p)}}),
        }));
    }
    json r = result(h);
    auto part = [&](uint32_t start, uint32_t n) { return chip("part", h, std::nullopt, json::array({rng(start, n)})); };
    auto sub = [&](json o, uint32_t start, uint32_t n) {
        o["f"] = json::array({rng(start, n)});
        return o;
    };
    json finish = json::array({
        op("activation", {{"func", "reciprocal"}, {"dst", chip("rl")}, {"src", sub(r, D, 1)}}),
        op("tensor_scalar", {{"dst", chip("ob", h)}, {"src", sub(r, 0, D)}, {"operator0", "multiply"},
                             {"operand0", chip("rl")}}),
        op("dma", {{"src", chip("ob", h)},
                   {"dst", {{"tensor", "o"}, {"offset", fmt::format("{} * {}", h, uint64_t(G) * D)},
                            {"ap", json::array({rng(D, G), rng(1, D)})}}},
                   {"queue", 1},
                   {"spread", false}}),
    });
    if (s_.tiles_per_head == 1) {
        append(out, finish);
        return out;
    }
    // Split KV: a partner writes its partial (O, l, -max); the owner merges after the barrier.
    json partner = json::array({op("tensor_copy", {{"dst", part(0, D + 1)}, {"src", r}})});
    if (sh_.full.chunks == 1)
        partner.push_back(op("tensor_copy", {{"dst", part(D + 1, 1)}, {"src", neg_max(h, b)}}));
    partner.push_back(op("dma", {{"src", chip("part", h)},
                                 {"dst", {{"tensor", "partial"}, {"offset", 0}, {"ap", json::array({rng(D + 2, G), rng(1, D + 2)})}}},
                                 {"queue", 1},
                                 {"spread", false}}));
    out.push_back(when(fmt::format("pid % {} != 0", s_.tiles_per_head), partner));
    return out;
}

// A split head's owner: its partners' partials in, the common max, each partial weighted by
// exp(m_k - m), summed, O / l, O out.
json Builder::owner_merge() const {
    const uint32_t G = s_.group, D = s_.head_dim, k = s_.tiles_per_head;
    const std::string b = fmt::format("{}", sh_.nbh - 1);  // the head's last block (one head per tile)
    json r = result("0"), nmax = neg_max("0", b);
    auto sub = [&](json o, uint32_t start, uint32_t n) {
        o["f"] = json::array({rng(start, n)});
        return o;
    };
    json pin_max = chip("pin", "0", std::nullopt, json::array({rng(0, k - 1), rng(D + 1, 1)}));
    json body = json::array({
        loop("k", k - 1, json::array({op("dma", {{"dst", chip("pin", "0", std::nullopt, json::array({rng("k", 1), rng(0, D + 2)}))},
                                                  {"src", {{"tensor", "partial"}, {"instance", "pid + 1 + k"}, {"offset", 0},
                                                           {"ap", json::array({rng(D + 2, G), rng(1, D + 2)})}}},
                                                  {"tile", sh_.nbh * s_.heads}})})),
        op("tensor_reduce", {{"reduce", "min"}, {"dst", chip("nmtot")}, {"src", pin_max}}),
        op("tensor_tensor", {{"operator", "min"}, {"dst", chip("nmtot")}, {"in0", chip("nmtot")}, {"in1", nmax}}),
        op("activation", {{"func", "exp"}, {"dst", chip("a", "0", std::nullopt, json::array({rng(0, 1)}))},
                          {"src", nmax}, {"scale", -1}, {"bias", chip("nmtot")}}),
        op("activation", {{"func", "exp"}, {"dst", chip("a", "0", std::nullopt, json::array({rng(1, k - 1)}))},
                          {"src", pin_max}, {"scale", -1}, {"bias", chip("nmtot")}}),
        op("tensor_scalar", {{"dst", chip("acc")}, {"src", sub(r, 0, D + 1)}, {"operator0", "multiply"},
                             {"operand0", chip("a", "0", std::nullopt, json::array({rng(0, 1)}))}}),
    });
    json pin_k = chip("pin", "0", std::nullopt, json::array({rng("k", 1), rng(0, D + 1)}));
    body.push_back(loop("k", k - 1, json::array({
        op("tensor_scalar", {{"dst", pin_k}, {"src", pin_k}, {"operator0", "multiply"},
                             {"operand0", chip("a", "0", std::nullopt, json::array({rng("k + 1", 1)}))}}),
        op("tensor_tensor", {{"operator", "add"}, {"dst", chip("acc")}, {"in0", chip("acc")}, {"in1", pin_k}}),
    })));
    append(body, json::array({
        op("activation", {{"func", "reciprocal"}, {"dst", chip("rl")}, {"src", sub(chip("acc"), D, 1)}}),
        op("tensor_scalar", {{"dst", chip("ob")}, {"src", sub(chip("acc"), 0, D)}, {"operator0", "multiply"},
                             {"operand0", chip("rl")}}),
        op("dma", {{"src", chip("ob")},
                   {"dst", {{"tensor", "o"}, {"offset", 0}, {"ap", json::array({rng(D, G), rng(1, D)})}}},
                   {"queue", 1},
                   {"spread", false}}),
    }));
    return json::array({op("barrier", {{"scope", "grid"}}), when(fmt::format("pid % {} == 0", k), body)});
}

json Builder::build() {
    json p = {{"format", "nctlm-kernel"}, {"version", 1}, {"name", "gqa_decode"},
              {"source", "testbenches/gqa/gqa_kernel.cpp"}};
    p["grid"] = s_.tiles;
    p["tensors"] = tensors();
    p["buffers"] = buffers();
    json body = json::array();
    if (!sh_.q_per_head)
        append(body, load_q("0"));
    if (sh_.full.chunks > 1)
        append(body, constants());
    const uint32_t NB = sh_.nbh * s_.heads;
    const bool pipelined = s_.buffers >= 2;
    const std::string cur = "jj", prev = pipelined ? "jj - 1" : "jj";
    json it = json::array();
    if (sh_.q_per_head)
        it.push_back(when(first(cur) + fmt::format(" and jj < {}", NB), load_q(head(cur))));
    json loads = shaped(cur, [&](const GqaBlockShape& k) {
        json kv = load_kv(cur, k, 0);
        append(kv, load_kv(cur, k, 1));
        return kv;
    });
    json qks = shaped(cur, [&](const GqaBlockShape& k) { return qk(cur, k); });
    json soft = shaped(cur, [&](const GqaBlockShape& k) {
        return first_or_not(cur, [&](bool init) { return softmax(cur, k, init); });
    });
    json trans = shaped(prev, [&](const GqaBlockShape& k) { return transpose(prev, k); });
    json pvs = shaped(prev, [&](const GqaBlockShape& k) { return pv(prev, k); });
    json upd = shaped(prev, [&](const GqaBlockShape& k) {
        return first_or_not(prev, [&](bool init) { return update(prev, k, init); });
    });
    json merged = json::array({when(last(prev), merge(prev))});
    if (pipelined) {
        // Block jj's loads; block jj-1's P^T (its copy to SBUF overlaps Q.K^T); block jj's fetch and
        // Q.K^T; block jj-1's P.V; block jj's softmax; block jj-1's O update and, after a head's
        // last block, the merge. One extra iteration drains the last block.
        const std::string has_cur = fmt::format("jj < {}", NB), has_prev = "jj >= 1";
        it.push_back(when(has_cur, loads));
        it.push_back(when(has_prev, trans));
        it.push_back(when(has_cur, qks));
        it.push_back(when(has_prev, pvs));
        it.push_back(when(has_cur, soft));
        it.push_back(when(has_prev, upd));
        it.push_back(when(has_prev, merged));
        body.push_back(loop("jj", NB + 1, it));
    } else {  // one K/V buffer: each block in turn
        for (json* part : {&loads, &qks, &soft, &trans, &pvs, &upd, &merged})
            append(it, *part);
        body.push_back(loop("jj", NB, it));
    }
    if (s_.tiles_per_head > 1)
        append(body, owner_merge());
    p["body"] = body;
    return p;
}

} // namespace

std::string gqa_kernel_check(const GqaKernelSpec& s, const PeConfig& pe) {
    Shape sh;
    return problem(s, pe, sh);
}

json gqa_decode_kernel(const GqaKernelSpec& s, const PeConfig& pe) {
    Shape sh;
    std::string why = problem(s, pe, sh);
    if (!why.empty())
        throw std::invalid_argument(why);
    return Builder(s, sh).build();
}

} // namespace nctlm
