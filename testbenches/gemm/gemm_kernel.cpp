#include "testbenches/gemm/gemm_kernel.h"

#include <fmt/format.h>
#include <stdexcept>

namespace nctlm {

using json = nlohmann::json;

namespace {

// Tensors and buffers shared by the pipeline and the preload, and the layout facts the body needs.
struct Frame {
    json program;
    uint32_t mb, nb, kb, fp, pc;  // blocks; fetch and C partitions
    bool streamed_b;
};

Frame frame(const GemmWorkload& w, const GemmTiling& t, uint32_t operand_buffers, const char* name) {
    Frame f;
    f.mb = GemmWorkload::blocks(w.m, w.tile_m);
    f.nb = GemmWorkload::blocks(w.n, w.tile_n);
    f.kb = GemmWorkload::blocks(w.k, w.tile_k);
    f.fp = w.fetch_partitions();
    f.pc = std::min(w.m, w.tile_m);
    f.streamed_b = !w.weights_resident;
    if (w.k > w.tile_k && w.k % w.tile_k)
        throw std::invalid_argument(
            fmt::format("workload.k={} is not a multiple of workload.tile_k={}: the pipeline's operands lie K over the "
                        "partitions in whole blocks",
                        w.k, w.tile_k));
    if (w.m > w.tile_m && w.m % w.tile_m)
        throw std::invalid_argument(fmt::format(
            "workload.m={} is not a multiple of workload.tile_m={}: C lies in whole row blocks", w.m, w.tile_m));
    const std::string dt = dtype_name(w.dtype);
    const uint64_t a_rows = t.col_blocks ? t.row_blocks : w.tiles;
    const uint64_t b_rows = w.weights_resident ? 1 : t.col_blocks ? t.col_blocks : w.tiles;
    const bool per_instance = t.grid > 1;
    json& p = f.program;
    p = {{"format", "nctlm-kernel"}, {"version", 1}, {"name", name}, {"source", "testbenches/gemm/gemm_kernel.cpp"}};
    p["grid"] = t.grid;
    auto tensor = [&](const char* n, uint64_t rows, uint64_t cols, const char* kind) {
        json t = {{"name", n}, {"dtype", dt}, {"kind", kind}, {"per_instance", per_instance}};
        t["shape"] = json::array({rows, cols});
        return t;
    };
    p["tensors"] = json::array({tensor("a", a_rows, uint64_t(w.m) * w.k, "input"),
                                tensor("b", b_rows, uint64_t(w.k) * w.n, "input"),
                                tensor("c", w.tiles, uint64_t(w.m) * w.n, "output")});
    // A and B with K on the partitions (one free row per K block); C with its rows on the
    // partitions, one free row per row block; one PSUM copy (a bank) per output block per slot.
    p["buffers"] = {
        {{"name", "a_in"}, {"memory", "sbuf"}, {"partitions", f.fp}, {"shape", {f.kb, w.m}}, {"dtype", dt}, {"bufs", w.buffers}},
        {{"name", "b_in"}, {"memory", "sbuf"}, {"partitions", f.fp}, {"shape", {f.kb, w.n}}, {"dtype", dt},
         {"bufs", f.streamed_b ? w.buffers : 1}, {"resident", !f.streamed_b}},
        {{"name", "acc"}, {"memory", "psum"}, {"partitions", f.pc}, {"shape", json::array({std::min(w.n, w.tile_n)})}, {"dtype", "fp32"},
         {"bufs", uint64_t(w.buffers) * f.mb * f.nb}},
        {{"name", "c_out"}, {"memory", "sbuf"}, {"partitions", f.pc}, {"shape", {f.mb, w.n}}, {"dtype", dt}, {"bufs", w.buffers}},
        {{"name", "a_stage"}, {"memory", "staging"}, {"partitions", f.fp}, {"shape", {f.kb, w.m}}, {"dtype", dt},
         {"bufs", operand_buffers}},
        {{"name", "b_stage"}, {"memory", "staging"}, {"partitions", f.fp}, {"shape", {f.kb, w.n}}, {"dtype", dt},
         {"bufs", operand_buffers}},
    };
    return f;
}

// [start, size] pairs; nlohmann's brace initialisation would read ["bk", 1] as an object entry.
json pair(json start, json size) { return json::array({std::move(start), std::move(size)}); }
json box(const char* buf, const std::string& copy, json p, json f) {
    json b = {{"buf", buf}, {"copy", copy}};
    b["p"] = std::move(p);
    b["f"] = std::move(f);
    return b;
}

json loop(const char* var, uint64_t trip, json body) {
    json l = json::object();
    l["loop"] = var;
    l["trip"] = trip;
    l["body"] = body.is_array() ? std::move(body) : json::array({std::move(body)});
    return l;
}

json load_b(const Frame& f, const std::string& row, const std::string& copy, uint32_t k, uint32_t n) {
    return {{"op", "dma"}, {"queue", 0}, {"spread", false}, {"tile", "i"},
            {"dst", {{"buf", "b_in"}, {"copy", copy}}},
            {"src", {{"tensor", "b"}, {"offset", fmt::format("({}) * {}", row, uint64_t(k) * n)},
                     {"ap", json::array({pair(1, uint64_t(k) * n)})}}}};
    (void)f;
}

} // namespace

json gemm_pipeline_kernel(const GemmWorkload& w, uint32_t operand_buffers, const GemmTiling& t) {
    Frame f = frame(w, t, operand_buffers, "gemm_pipeline");
    const std::string a_row = t.col_blocks ? fmt::format("i // {}", t.col_blocks) : "i";
    const std::string b_row = w.weights_resident ? "0" : t.col_blocks ? fmt::format("i % {}", t.col_blocks) : "i";
    const std::string b_copy = f.streamed_b ? "i" : "0";
    const uint32_t blocks = f.mb * f.nb;
    auto rows = fmt::format("min({}, {} - bm * {})", w.tile_m, w.m, w.tile_m);
    auto cols = fmt::format("min({}, {} - bn * {})", w.tile_n, w.n, w.tile_n);
    auto krows = fmt::format("min({}, {} - bk * {})", w.tile_k, w.k, w.tile_k);
    auto acc = fmt::format("i * {} + bm * {} + bn", blocks, f.nb);
    json acc_box = box("acc", acc, pair(0, rows), json::array({pair(0, cols)}));
    json tile_body = json::array();
    tile_body.push_back({{"op", "dma"}, {"queue", 0}, {"spread", false}, {"tile", "i"},
                         {"dst", {{"buf", "a_in"}, {"copy", "i"}}},
                         {"src", {{"tensor", "a"}, {"offset", fmt::format("({}) * {}", a_row, uint64_t(w.m) * w.k)},
                                  {"ap", json::array({pair(1, uint64_t(w.m) * w.k)})}}}});
    if (f.streamed_b)
        tile_body.push_back(load_b(f, b_row, b_copy, w.k, w.n));
    // Both operands into the array's staging buffers (copy i: they rotate), one SBUF access.
    json fetch = {{"op", "fetch"}, {"tile", "i"}};
    fetch["src"] = json::array({{{"buf", "a_in"}, {"copy", "i"}}, {{"buf", "b_in"}, {"copy", b_copy}}});
    fetch["dst"] = json::array({{{"buf", "a_stage"}, {"copy", "i"}}, {{"buf", "b_stage"}, {"copy", "i"}}});
    tile_body.push_back(fetch);
    json matmul = {{"op", "matmul"}, {"tile", "i"}, {"dst", acc_box},
                   {"stationary", box("a_stage", "i", pair(0, krows), json::array({pair("bk", 1), pair(fmt::format("bm * {}", w.tile_m), rows)}))},
                   {"moving", box("b_stage", "i", pair(0, krows), json::array({pair("bk", 1), pair(fmt::format("bn * {}", w.tile_n), cols)}))},
                   {"start", "bk == 0"}, {"stop", fmt::format("bk == {}", f.kb - 1)}};
    tile_body.push_back(loop("bm", f.mb, loop("bn", f.nb, loop("bk", f.kb, matmul))));
    json copy = {{"op", "tensor_copy"}, {"tile", "i"}, {"src", acc_box},
                 {"dst", box("c_out", "i", pair(0, rows), json::array({pair("bm", 1), pair(fmt::format("bn * {}", w.tile_n), cols)}))}};
    tile_body.push_back(loop("bm", f.mb, loop("bn", f.nb, copy)));
    tile_body.push_back({{"op", "dma"}, {"queue", 1}, {"spread", false}, {"tile", "i"},
                         {"src", {{"buf", "c_out"}, {"copy", "i"}}},
                         {"dst", {{"tensor", "c"}, {"offset", fmt::format("i * {}", uint64_t(w.m) * w.n)},
                                  {"ap", json::array({pair(1, uint64_t(w.m) * w.n)})}}}});
    f.program["body"] = json::array({loop("i", w.tiles, tile_body)});
    return f.program;
}

json gemm_preload_kernel(const GemmWorkload& w) {
    Frame f = frame(w, {}, 1, "gemm_weights");
    f.program["buffers"][1]["resident"] = false;
    json dma = load_b(f, "0", "0", w.k, w.n);
    dma.erase("tile");
    f.program["body"] = json::array({dma});
    return f.program;
}

} // namespace nctlm

namespace nctlm {

namespace {
// Expressions of the blocked kernel, by the loop variables bm, bn, bk, mt, nt, kt.
const std::string kLda = "min(M, MC)";                 // a_t's row length, C's rows per instance
const std::string kRows = "min(MC, M - pid * MC)";     // this instance's rows
const std::string kBlocksM = "(" + kRows + " + BM - 1) // BM", kBlocksN = "(N + BN - 1) // BN",
                  kBlocksK = "(K + BK - 1) // BK";
const std::string kBm = "min(BM, " + kRows + " - bm * BM)", kBn = "min(BN, N - bn * BN)", kBk = "min(BK, K - bk * BK)";
// The block step (bm, bn, bk) in order: A and B blocks rotate over their copies with it.
const std::string kStep = "(bm * (" + kBlocksN + ") + bn) * (" + kBlocksK + ") + bk";

json span(const std::string& start, const std::string& size) { return pair(start, size); }

// One operand's block in: K rows bk x BK ... on the partitions in tiles of TK (whole tiles in one
// DMA, a last partial tile in another), `cols` columns from column `col0` of a row of `ld`.
json load_block(const char* buf, const char* tensor, const std::string& ld, const std::string& col0,
                const std::string& cols) {
    const std::string whole = "(" + kBk + ") // TK", rest = "(" + kBk + ") % TK";
    json full = {{"op", "dma"},
                 {"dst", {{"buf", buf}, {"copy", kStep}, {"p", span("0", "TK")}, {"f", json::array({span("0", whole), span("0", cols)})}}},
                 {"src", {{"tensor", tensor}, {"offset", "(bk * BK) * " + ld + " + " + col0},
                          {"ap", json::array({span(ld, "TK"), span("TK * " + ld, whole), span("1", cols)})}}}};
    json part = {{"op", "dma"},
                 {"dst", {{"buf", buf}, {"copy", kStep}, {"p", span("0", rest)}, {"f", json::array({span(whole, "1"), span("0", cols)})}}},
                 {"src", {{"tensor", tensor}, {"offset", "(bk * BK + (" + whole + ") * TK) * " + ld + " + " + col0},
                          {"ap", json::array({span(ld, rest), span("1", cols)})}}}};
    return json::array({{{"if", whole + " > 0"}, {"body", json::array({full})}},
                        {{"if", rest + " > 0"}, {"body", json::array({part})}}});
}

json loop_expr(const char* var, const std::string& trip, json body) {
    return {{"loop", var}, {"trip", trip}, {"body", std::move(body)}};
}
} // namespace

json gemm_blocked_kernel(Dtype dtype) {
    const std::string dt = dtype_name(dtype);
    json p = {{"format", "nctlm-kernel"}, {"version", 1}, {"name", "gemm_blocked"}, {"source", "testbenches/gemm/gemm_kernel.cpp"}};
    p["args"] = {{"M", 4096}, {"MC", 4096}, {"CORES", 1}, {"K", 8192}, {"N", 8192}, {"BM", 2048}, {"BN", 1024},
                 {"BK", 1024}, {"ABUFS", 2}, {"BBUFS", 2}, {"PSUM_BUFS", 4}, {"TM", 128}, {"TK", 128}, {"TN", 512}};
    p["grid"] = "CORES";
    auto tensor = [&](const char* name, json shape, const char* kind) {
        json t = {{"name", name}, {"dtype", dt}, {"kind", kind}, {"per_instance", true}};
        t["shape"] = std::move(shape);
        return t;
    };
    p["tensors"] = json::array({tensor("a_t", {"K", kLda}, "input"), tensor("b", {"K", "N"}, "input"),
                                tensor("c", {kLda, "N"}, "output")});
    auto buffer = [](const char* name, const char* memory, const char* parts, json shape, const std::string& type,
                     const char* bufs) {
        json b = {{"name", name}, {"memory", memory}, {"partitions", parts}, {"dtype", type}, {"bufs", bufs}};
        b["shape"] = std::move(shape);
        return b;
    };
    p["buffers"] = json::array({
        buffer("a_blk", "sbuf", "TK", {"(BK + TK - 1) // TK", "BM"}, dt, "ABUFS"),
        buffer("b_blk", "sbuf", "TK", {"(BK + TK - 1) // TK", "BN"}, dt, "BBUFS"),
        buffer("acc", "sbuf", "TM", {"(BM + TM - 1) // TM", "BN"}, "fp32", "1"),
        buffer("c_blk", "sbuf", "TM", {"BN"}, dt, "2"),
        buffer("ps", "psum", "TM", {"TN"}, "fp32", "PSUM_BUFS"),
    });
    const std::string ms = "min(TM, " + kBm + " - mt * TM)", ns = "min(TN, " + kBn + " - nt * TN)",
                      ks = "min(TK, " + kBk + " - kt * TK)";
    const std::string tile = "(" + kStep + ") * ((BM + TM - 1) // TM) * ((BN + TN - 1) // TN) + mt * ((BN + TN - 1) // TN) + nt";
    json ps = {{"buf", "ps"}, {"copy", tile}, {"p", span("0", ms)}, {"f", json::array({span("0", ns)})}};
    json acc = {{"buf", "acc"}, {"p", span("0", ms)}, {"f", json::array({span("mt", "1"), span("nt * TN", ns)})}};
    json matmul = {{"op", "matmul"},
                   {"dst", ps},
                   {"stationary", {{"buf", "a_blk"}, {"copy", kStep}, {"p", span("0", ks)},
                                   {"f", json::array({span("kt", "1"), span("mt * TM", ms)})}}},
                   {"moving", {{"buf", "b_blk"}, {"copy", kStep}, {"p", span("0", ks)},
                               {"f", json::array({span("kt", "1"), span("nt * TN", ns)})}}},
                   {"start", "kt == 0"},
                   {"stop", "kt == (" + kBk + " + TK - 1) // TK - 1"}};
    json evacuate = {{"if", "bk == 0"},
                     {"body", json::array({{{"op", "tensor_copy"}, {"dst", acc}, {"src", ps}}})},
                     {"else", json::array({{{"op", "tensor_tensor"}, {"operator", "add"}, {"dst", acc}, {"in0", acc}, {"in1", ps}}})}};
    json k_block = load_block("a_blk", "a_t", kLda, "bm * BM", kBm);
    for (auto& l : load_block("b_blk", "b", "N", "bn * BN", kBn))
        k_block.push_back(l);
    k_block.push_back(loop_expr("mt", "(" + kBm + " + TM - 1) // TM",
                                json::array({loop_expr("nt", "(" + kBn + " + TN - 1) // TN",
                                                       json::array({loop_expr("kt", "(" + kBk + " + TK - 1) // TK",
                                                                              json::array({matmul})),
                                                                    evacuate}))})));
    const std::string out_copy = "(bm * (" + kBlocksN + ") + bn) * ((BM + TM - 1) // TM) + mt";
    json c_out = {{"buf", "c_blk"}, {"copy", out_copy}, {"p", span("0", ms)}, {"f", json::array({span("0", kBn)})}};
    json store = json::array({
        {{"op", "activation"}, {"func", "copy"}, {"dst", c_out},
         {"src", {{"buf", "acc"}, {"p", span("0", ms)}, {"f", json::array({span("mt", "1"), span("0", kBn)})}}}},
        {{"op", "dma"}, {"src", c_out},
         {"dst", {{"tensor", "c"}, {"offset", "(bm * BM + mt * TM) * N + bn * BN"}, {"ap", json::array({span("N", ms), span("1", kBn)})}}}},
    });
    p["body"] = json::array({loop_expr("bm", kBlocksM, json::array({loop_expr(
                                 "bn", kBlocksN,
                                 json::array({loop_expr("bk", kBlocksK, k_block),
                                              loop_expr("mt", "(" + kBm + " + TM - 1) // TM", store)}))}))});
    return p;
}

void set_gemm_blocked_args(json& kernel, uint64_t m, uint64_t rows, uint32_t cores, uint64_t k, uint64_t n,
                           const analytic::GemmShape& t, const analytic::GemmBlocking& b) {
    kernel["args"] = {{"M", m}, {"MC", rows}, {"CORES", cores}, {"K", k}, {"N", n}, {"BM", b.bm}, {"BN", b.bn},
                      {"BK", b.bk}, {"ABUFS", b.a_bufs}, {"BBUFS", b.b_bufs}, {"PSUM_BUFS", b.psum_bufs},
                      {"TM", t.tile_m}, {"TK", t.tile_k}, {"TN", t.tile_n}};
}

} // namespace nctlm
