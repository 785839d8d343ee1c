#include "models/analytic/kernel_roofline.h"

#include "models/dma/dma_cost.h"

#include <algorithm>
#include <fmt/format.h>
#include <stdexcept>

namespace nctlm::analytic {

// --- costing ----------------------------------------------------------------------------------------
double KernelWork::ports_ns(const EngineOp& op) const {
    double ns = 0;
    if (op.psum_read > 0)
        ns = std::max(ns, pe_.psum_latency.ns + pe_.psum_partition_bandwidth.transfer(op.psum_read).ns);
    if (op.sbuf_read > 0)
        ns = std::max(ns, pe_.sbuf_latency.ns + pe_.sbuf_partition_bandwidth.transfer(op.sbuf_read).ns);
    if (op.write > 0) {
        const Bandwidth& bw = op.write_psum ? pe_.psum_partition_bandwidth : pe_.sbuf_partition_bandwidth;
        ns = std::max(ns, (op.write_psum ? pe_.psum_latency : pe_.sbuf_latency).ns + bw.transfer(op.write).ns);
    }
    return ns;
}

double KernelWork::vector_ns(const EngineOp& op) const {
    // An op reading PSUM streams fp32 accumulators (the vector engine's rule, vector_engine.cpp).
    VectorOperands operands{op.psum_read > 0 ? Dtype::Fp32 : op.dtype, op.psum_read > 0};
    return std::max(pe_.vector_op_time(op.free, op.inputs, operands).ns, ports_ns(op));
}

double KernelWork::scalar_ns(const EngineOp& op) const {
    return std::max(pe_.scalar_op_time(op.free, op.partitions, 1).ns, ports_ns(op));
}

double KernelWork::matmul_ns(uint32_t m, uint32_t cols, Dtype dtype, double psum_bytes) const {
    double write = pe_.psum_latency.ns + pe_.psum_partition_bandwidth.transfer(psum_bytes).ns;
    return std::max(pe_.matmul_time(m, cols, dtype).ns, write);
}

void KernelWork::count_ports(double n, const EngineOp& op) {
    psum_read += n * op.psum_read;
    sbuf_read += n * op.sbuf_read;
    (op.write_psum ? psum_write : sbuf_write) += n * op.write;
}

void KernelWork::matmul(double n, uint32_t k, uint32_t m, uint32_t cols, Dtype dtype) {
    tensor_ns += n * matmul_ns(m, cols, dtype, 4.0 * cols);
    psum_write += n * 4.0 * cols;
    flops += n * 2.0 * k * m * cols;
    matmuls += n;
}

void KernelWork::transpose(double n, uint32_t p, uint32_t f, Dtype dtype) {
    tensor_ns += n * matmul_ns(p, f, dtype, double(p) * dtype_bytes(dtype));
    psum_write += n * double(p) * dtype_bytes(dtype);
    transposes += n;
}

void KernelWork::vector(double n, const EngineOp& op) {
    vector_busy_ns += n * vector_ns(op);
    count_ports(n, op);
    vector_ops += n;
}

void KernelWork::scalar(double n, const EngineOp& op) {
    scalar_busy_ns += n * scalar_ns(op);
    count_ports(n, op);
    scalar_ops += n;
}

void KernelWork::dma(double n, double bytes, bool in) {
    (in ? bytes_in : bytes_out) += n * bytes;
    dma_instructions += n;
}

namespace {

constexpr double kBf16 = 2, kFp32 = 4;

class Args {
public:
    Args(const std::string& kernel, const std::map<std::string, int64_t>& args) : kernel_(kernel), args_(args) {}
    uint64_t operator()(const std::string& name, int64_t lo = 1, int64_t hi = int64_t(1) << 40) const {
        auto it = args_.find(name);
        if (it == args_.end())
            throw std::invalid_argument(fmt::format("roofline of {}: argument {} missing", kernel_, name));
        if (it->second < lo || it->second > hi)
            throw std::invalid_argument(
                fmt::format("roofline of {}: {} = {} is outside {}..{}", kernel_, name, it->second, lo, hi));
        return uint64_t(it->second);
    }
    void require(bool ok, const std::string& what) const {
        if (!ok)
            throw std::invalid_argument(fmt::format("roofline of {}: {}", kernel_, what));
    }

private:
    std::string kernel_;
    const std::map<std::string, int64_t>& args_;
};

// Row tiles of at most 128 partitions, column tiles of at most `tile` elements: (size, count) pairs.
std::vector<std::pair<uint32_t, uint64_t>> tiles(uint64_t total, uint64_t tile) {
    std::vector<std::pair<uint32_t, uint64_t>> t;
    if (total / tile)
        t.push_back({uint32_t(tile), total / tile});
    if (total % tile)
        t.push_back({uint32_t(total % tile), 1});
    return t;
}

// A (P, 1) statistic update: one element per partition, `reads` fp32 operands.
EngineOp small(uint32_t reads, uint32_t pr) { return {1, 1, Dtype::Fp32, 0, reads * kFp32, kFp32, false, pr}; }
// A memset of `free` fp32 elements per partition (the vector rule's zero-input op).
EngineOp fill(uint32_t free) { return {free, 0, Dtype::Fp32, 0, 0, free * kFp32, false, 128}; }

// add, silu_mul: per 128 rows x TC columns, two loads, (silu on the scalar engine,) one two-input
// vector op, one store (kernels/add.py, kernels/silu_mul.py).
void elementwise(KernelWork& w, const Args& a, bool silu) {
    uint64_t rows = a("ROWS"), cols = a("COLS"), tc = a("TC", 1, 1 << 20);
    for (auto [pr, nr] : tiles(rows, 128))
        for (auto [pc, nc] : tiles(cols, tc)) {
            double n = double(nr) * double(nc), bytes = double(pr) * pc * kBf16;
            w.dma(2 * n, bytes, true);
            if (silu)
                w.scalar(n, {pc, 1, Dtype::Bf16, 0, pc * kBf16, pc * kBf16, false, pr});
            w.vector(n, {pc, 2, Dtype::Bf16, 0, 2 * pc * kBf16, pc * kBf16, false, pr});
            w.dma(n, bytes, false);
        }
}

// softmax: per 128 rows, the negated row max (vector); exp with its sum, 1 / sum and the scaling
// (scalar) (kernels/softmax.py).
void softmax(KernelWork& w, const Args& a) {
    uint64_t rows = a("ROWS"), cols = a("COLS", 1, 1 << 20);
    auto c = uint32_t(cols);
    for (auto [pr, nr] : tiles(rows, 128)) {
        double n = double(nr);
        w.dma(n, double(pr) * c * kBf16, true);
        w.vector(n, {c, 1, Dtype::Fp32, 0, c * kBf16, kFp32, false, pr});
        w.scalar(n, {c, 1, Dtype::Fp32, 0, c * kBf16 + kFp32, c * kFp32 + kFp32, false, pr});
        w.scalar(n, small(1, pr));
        w.scalar(n, {c, 1, Dtype::Bf16, 0, c * kFp32 + kFp32, c * kBf16, false, pr});
        w.dma(n, double(pr) * c * kBf16, false);
    }
}

// rmsnorm: the weight broadcast once (a 128-partition stride-0 load) and eps set once; per 128 rows
// the sum of squares, 1/sqrt(mean + eps) and the scaling (scalar), the weight product (vector)
// (kernels/rmsnorm.py).
void rmsnorm(KernelWork& w, const Args& a) {
    uint64_t rows = a("ROWS"), cols = a("COLS", 1, 1 << 20);
    auto c = uint32_t(cols);
    w.dma(1, 128.0 * c * kBf16, true);
    w.vector(1, fill(1));
    for (auto [pr, nr] : tiles(rows, 128)) {
        double n = double(nr);
        w.dma(n, double(pr) * c * kBf16, true);
        w.scalar(n, {c, 1, Dtype::Bf16, 0, c * kBf16, c * kBf16 + kFp32, false, pr});
        w.scalar(n, small(2, pr));
        w.scalar(n, {c, 1, Dtype::Bf16, 0, c * kBf16 + kFp32, c * kBf16, false, pr});
        w.vector(n, {c, 2, Dtype::Bf16, 0, 2 * c * kBf16, c * kBf16, false, pr});
        w.dma(n, double(pr) * c * kBf16, false);
    }
}

// layernorm: gamma and beta broadcast once, eps set once; per 128 rows on the scalar engine the row
// sum and the sum of squared deviations, three (128, 1) statistics, the normalization; on the vector
// engine x gamma + beta (kernels/layernorm.py).
void layernorm(KernelWork& w, const Args& a) {
    uint64_t rows = a("ROWS"), cols = a("COLS", 1, 1 << 20);
    auto c = uint32_t(cols);
    w.dma(2, 128.0 * c * kBf16, true);
    w.vector(1, fill(1));
    for (auto [pr, nr] : tiles(rows, 128)) {
        double n = double(nr);
        w.dma(n, double(pr) * c * kBf16, true);
        w.scalar(n, {c, 1, Dtype::Bf16, 0, c * kBf16, c * kBf16 + kFp32, false, pr});
        w.scalar(n, small(1, pr));
        w.scalar(n, {c, 1, Dtype::Bf16, 0, c * kBf16 + kFp32, c * kBf16 + kFp32, false, pr});
        w.scalar(2 * n, small(2, pr));
        w.scalar(n, {c, 1, Dtype::Bf16, 0, c * kBf16 + 2 * kFp32, c * kBf16, false, pr});
        w.vector(2 * n, {c, 2, Dtype::Bf16, 0, 2 * c * kBf16, c * kBf16, false, pr});
        w.dma(n, double(pr) * c * kBf16, false);
    }
}

// gemm: per output block, the accumulator zeroed, K / BK blocks of A and B loaded (one DMA per 128
// rows), M N K / (128 x 512 x 128) matmuls, one PSUM -> SBUF accumulation per 128 x 512 tile and K
// block, the block cast out on the scalar engine and stored (kernels/gemm.py).
void gemm(KernelWork& w, const Args& a) {
    uint64_t m = a("M"), k = a("K"), n = a("N"), bm = a("BM"), bn = a("BN"), bk = a("BK");
    a.require(bm % 128 == 0 && bk % 128 == 0 && bn % 512 == 0, "BM and BK must be multiples of 128, BN of 512");
    a.require(m % bm == 0 && n % bn == 0 && k % bk == 0, "M, N and K must be multiples of BM, BN and BK");
    double blocks = double(m / bm) * double(n / bn), kblocks = double(k / bk);
    double tiles_mn = double(m / 128) * double(n / 512);
    w.vector(blocks, fill(uint32_t(bm / 128 * bn)));
    w.dma(blocks * kblocks * double(bk / 128), 128.0 * double(bm) * kBf16, true);
    w.dma(blocks * kblocks * double(bk / 128), 128.0 * double(bn) * kBf16, true);
    w.matmul(tiles_mn * double(k / 128), 128, 128, 512, Dtype::Bf16);
    w.vector(tiles_mn * kblocks, {512, 2, Dtype::Fp32, 512 * kFp32, 512 * kFp32, 512 * kFp32, false, 128});
    auto b = uint32_t(bn);
    w.scalar(double(m / 128) * double(n / bn), {b, 1, Dtype::Bf16, 0, b * kFp32, b * kBf16, false, 128});
    w.dma(double(m / 128) * double(n / bn), 128.0 * b * kBf16, false);
}

// The online softmax of `blocks` blocks of 512 scores on 128 rows (flash_attention, gqa_decode):
// the row max (vector), the statistics (one vector, three scalar small ops), exp with the row sum
// (scalar), and the four 128 x 128 transposes of p.
void online_softmax(KernelWork& w, double blocks) {
    w.vector(blocks, {512, 1, Dtype::Fp32, 512 * kFp32, 0, kFp32, false, 128});
    w.vector(blocks, small(2, 128));
    w.scalar(blocks, small(2, 128));
    w.scalar(blocks, {512, 1, Dtype::Bf16, 512 * kFp32, kFp32, 512 * kBf16 + kFp32, false, 128});
    w.scalar(blocks, small(3, 128));
    w.scalar(blocks, small(1, 128));
    w.transpose(blocks * 4, 128, 128, Dtype::Bf16);
}

// Per block, the fp32 output (128 x d) rescaled by alpha (scalar) and p v added into it (vector).
void rescale_output(KernelWork& w, double blocks, uint32_t d) {
    w.scalar(blocks, {d, 1, Dtype::Fp32, 0, d * kFp32 + kFp32, d * kFp32, false, 128});
    w.vector(blocks, {d, 2, Dtype::Fp32, d * kFp32, d * kFp32, d * kFp32, false, 128});
}

// flash_attention: per head and 128-query tile i, i // 4 + 1 key blocks of 512 (the last one holds
// the diagonal); per block the loads of K (D x 512) and V (4 x 128 x D), QK^T and the mask
// accumulation (two 128 x 512 matmuls), the row max (vector), the statistics (one vector, three
// scalar small ops), exp with the row sum (scalar), four transposes, the PSUM -> SBUF copy of
// p^T (vector), four PV matmuls, the output rescale (scalar) and accumulation (vector); per
// tile the q load, three memsets, the division and the store (kernels/flash_attention.py). The
// one-time mask set-up (a few instructions) is left out.
void flash_attention(KernelWork& w, const Args& a) {
    uint64_t h = a("H"), kvh = a("KVH"), s = a("S"), dd = a("D", 1, 128);
    a.require(h % 2 == 0 && h % kvh == 0, "H must be even and a multiple of KVH");
    a.require(s % 512 == 0, "S must be a multiple of 512");
    auto d = uint32_t(dd);
    uint64_t q = s / 512;
    double tiles = double(h) * double(s / 128);
    double blocks = double(h) * 2.0 * double(q) * double(q + 1);  // sum over i of i // 4 + 1, per head
    w.dma(tiles, double(d) * 128 * kBf16, true);
    w.vector(tiles * 2, fill(1));
    w.vector(tiles, fill(d));
    w.dma(blocks, double(d) * 512 * kBf16, true);
    w.dma(blocks * 4, 128.0 * d * kBf16, true);
    w.matmul(blocks, d, 128, 512, Dtype::Bf16);
    w.matmul(blocks, 128, 128, 512, Dtype::Bf16);
    online_softmax(w, blocks);
    w.vector(blocks, {512, 1, Dtype::Bf16, 512 * kBf16, 0, 512 * kBf16, false, 128});
    w.matmul(blocks * 4, 128, 128, d, Dtype::Bf16);
    rescale_output(w, blocks, d);
    w.vector(tiles, {d, 1, Dtype::Bf16, 0, d * kFp32 + kFp32, d * kBf16, false, 128});
    w.dma(tiles, 128.0 * d * kBf16, false);
}

// gqa_decode: P = 128 // G (sequence, KV head) pairs per pass share the partitions; per pass the
// P q loads, three memsets, the division and the P stores; per pass and block of 512 keys, per pair
// the K load (D x 512), four V loads (128 x D), the QK^T matmul (G columns into its rows) and four
// PV matmuls; for all pairs at once the row max (vector), the statistics (one vector, three scalar
// small ops), exp with the row sum (scalar), four transposes and their PSUM -> SBUF copies
// (vector), the PV memset, the output rescale (scalar) and accumulation (vector)
// (kernels/gqa_decode.py).
void gqa_decode(KernelWork& w, const Args& a) {
    uint64_t pairs = a("PAIRS"), g = a("G", 2, 128), c = a("C"), dd = a("D", 1, 128);
    a.require(128 % g == 0, "G must divide 128");
    uint64_t per_pass = 128 / g;
    a.require(pairs % per_pass == 0, "PAIRS must be a multiple of 128 / G");
    a.require(c % 512 == 0, "C must be a multiple of 512");
    auto d = uint32_t(dd), gq = uint32_t(g);
    double passes = double(pairs / per_pass), p = double(per_pass);
    double blocks = passes * double(c / 512);
    w.dma(passes * p, double(d) * g * kBf16, true);
    w.vector(passes * 2, fill(1));
    w.vector(passes, fill(d));
    w.dma(blocks * p, double(d) * 512 * kBf16, true);
    w.dma(blocks * p * 4, 128.0 * d * kBf16, true);
    w.matmul(blocks * p, d, gq, 512, Dtype::Bf16);
    online_softmax(w, blocks);
    w.vector(blocks * 4, {128, 1, Dtype::Bf16, 128 * kBf16, 0, 128 * kBf16, false, 128});
    w.vector(blocks, {d, 0, Dtype::Fp32, 0, 0, d * kFp32, true, 128});
    w.matmul(blocks * p * 4, 128, gq, d, Dtype::Bf16);
    rescale_output(w, blocks, d);
    w.vector(passes, {d, 1, Dtype::Bf16, 0, d * kFp32 + kFp32, d * kBf16, false, 128});
    w.dma(passes * p, double(g) * d * kBf16, false);
}

using Builder = void (*)(KernelWork&, const Args&);
const std::vector<std::pair<std::string, Builder>>& builders() {
    static const std::vector<std::pair<std::string, Builder>> b = {
        {"gemm", gemm},
        {"flash_attention", flash_attention},
        {"gqa_decode", gqa_decode},
        {"rmsnorm", rmsnorm},
        {"layernorm", layernorm},
        {"softmax", softmax},
        {"silu_mul", [](KernelWork& w, const Args& a) { elementwise(w, a, true); }},
        {"add", [](KernelWork& w, const Args& a) { elementwise(w, a, false); }},
    };
    return b;
}

} // namespace

const std::vector<std::string>& library_kernels() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> n;
        for (auto& [name, build] : builders())
            n.push_back(name);
        return n;
    }();
    return names;
}

KernelRoofline kernel_roofline(const std::string& kernel, const std::map<std::string, int64_t>& args,
                               const PeConfig& pe, const DmaConfig& dma, const HbmConfig& hbm) {
    auto it = std::find_if(builders().begin(), builders().end(), [&](auto& b) { return b.first == kernel; });
    if (it == builders().end())
        throw std::invalid_argument("no roofline for kernel '" + kernel + "' (not a library kernel)");
    KernelRoofline r{kernel, KernelWork(pe), {}, {}};
    it->second(r.work, Args(kernel, args));
    const KernelWork& w = r.work;
    double bytes = w.bytes_in + w.bytes_out;
    // Tensors in the local HBM stack (the program's default placement), one NeuronCore.
    r.ceilings = {{"hbm stack", hbm.stack_bandwidth().transfer(bytes).ns},
                  {"dma engines", dma.data_bandwidth().transfer(bytes).ns},
                  {"dma issue", bytes / DmaCostRules::from(dma).peak_rate()},  // every engine on full rows (dma_cost.h)
                  {"tensor", w.tensor_ns},
                  {"vector", w.vector_busy_ns},
                  {"scalar", w.scalar_busy_ns},
                  {"sbuf read ports", pe.sbuf_partition_bandwidth.transfer(w.sbuf_read).ns},
                  {"sbuf write ports", pe.sbuf_partition_bandwidth.transfer(w.sbuf_write).ns},
                  {"psum read ports", pe.psum_partition_bandwidth.transfer(w.psum_read).ns},
                  {"psum write ports", pe.psum_partition_bandwidth.transfer(w.psum_write).ns}};
    r.bound = *std::max_element(r.ceilings.begin(), r.ceilings.end(),
                                [](const Ceiling& x, const Ceiling& y) { return x.ns < y.ns; });
    return r;
}

} // namespace nctlm::analytic
