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
