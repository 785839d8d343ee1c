#include "models/analytic/gemm_blocking.h"

#include "models/common/units.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <tuple>

namespace nctlm::analytic {

namespace {

uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

// A dimension cut into blocks: `count` blocks of `size`, then (ragged) one of the rest.
struct Part {
    uint64_t size, count;
};
std::vector<Part> parts(uint64_t dim, uint64_t block) {
    std::vector<Part> out;
    if (dim / block)
        out.push_back({block, dim / block});
    if (dim % block)
        out.push_back({dim % block, 1});
    return out;
}

// Time to move `bytes` per partition through one SBUF/PSUM port (latency included).
double sbuf_ns(const PeConfig& pe, double bytes) { return pe.sbuf_latency.ns + bytes * 1e9 / pe.sbuf_partition_bandwidth.bytes_per_s; }
double psum_ns(const PeConfig& pe, double bytes) { return pe.psum_latency.ns + bytes * 1e9 / pe.psum_partition_bandwidth.bytes_per_s; }

const uint32_t kMultiples[] = {1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64};

std::vector<uint32_t> block_sizes(uint64_t dim, uint32_t tile) {
    uint64_t whole = ceil_div(dim, tile) * tile;
    std::vector<uint32_t> out;
    for (uint32_t m : kMultiples)
        if (uint64_t(m) * tile < whole)
            out.push_back(m * tile);
    if (whole <= UINT32_MAX)
        out.push_back(uint32_t(whole));
    return out;
}

} // namespace

uint64_t gemm_sbuf_bytes(const GemmShape& s, const GemmBlocking& b) {
    const uint64_t e = dtype_bytes(s.dtype), kt = ceil_div(b.bk, s.tile_k);
    return b.a_bufs * kt * b.bm * e + b.b_bufs * kt * b.bn * e  // A and B blocks
           + ceil_div(b.bm, s.tile_m) * b.bn * 4                // the fp32 accumulator of a C block
           + 2 * uint64_t(b.bn) * e;                            // C rows on their way out
}

uint64_t gemm_psum_bytes(const GemmShape& s, const GemmBlocking& b, const PeConfig& pe) {
    const uint64_t bank = pe.psum_bank_bytes(), tile = uint64_t(s.tile_n) * 4;
    if (tile > bank)
        return UINT64_MAX;
    return ceil_div(b.psum_bufs, bank / tile) * bank;
}

std::string gemm_blocking_fits(const GemmShape& s, const GemmBlocking& b, const PeConfig& pe) {
    if (s.tile_m > pe.tensor_cols || s.tile_k > pe.tensor_rows || s.tile_k > pe.sbuf_partitions ||
        s.tile_m > pe.sbuf_partitions || s.tile_n > pe.moving_max)
        return fmt::format("matmul tile {}x{}x{} exceeds the array (pe.tensor_rows, pe.tensor_cols, pe.moving_max)",
                           s.tile_m, s.tile_k, s.tile_n);
    uint64_t sbuf = gemm_sbuf_bytes(s, b), psum = gemm_psum_bytes(s, b, pe);
    if (sbuf > pe.sbuf_partition_bytes)
        return fmt::format("{} per SBUF partition > pe.sbuf_partition_bytes={}", format_bytes(sbuf),
                           format_bytes(pe.sbuf_partition_bytes));
    if (psum > pe.psum_partition_bytes)
        return fmt::format("{} PSUM tiles of {} fp32 need more than pe.psum_partition_bytes={}", b.psum_bufs,
                           s.tile_n, format_bytes(pe.psum_partition_bytes));
    return "";
}

double GemmRates::run_rate(double run) const {
    double hbm = full_run_bytes ? dma_bytes_per_ns * std::sqrt(std::min(1.0, run / double(full_run_bytes))) : dma_bytes_per_ns;
    if (engines == 0 || run <= 0)
        return hbm;
    const double packets = std::ceil(run / double(packet_bytes));
    return std::min(hbm, double(engines) * run / (packets * packet_overhead_ns + run * engine_ns_per_byte));
}

void GemmRates::use_engines(const DmaConfig& dma) {
    engines = dma.engines;
    packet_bytes = std::max<uint64_t>(1, dma.burst_size);
    packet_overhead_ns = dma.packet_overhead.ns;
    engine_ns_per_byte = 1e9 / dma.engine_bandwidth.bytes_per_s;
}

GemmBlockingCost gemm_blocking_cost(const GemmShape& s, const GemmBlocking& b, const PeConfig& pe,
                                    const GemmRates& rates) {
    GemmBlockingCost c;
    const uint64_t e = dtype_bytes(s.dtype);
    const VectorOperands psum_fp32{Dtype::Fp32, true};
    // One matmul: its compute or its accumulator write into PSUM, whichever is longer.
    auto matmul = [&](uint64_t ms, uint64_t ns) {
        return std::max(pe.matmul_time(uint32_t(ms), uint32_t(ns), s.dtype).ns, psum_ns(pe, ns * 4.0));
    };
    // One tile of PSUM into the SBUF accumulator (a copy on the first K block, then adds), as long
    // as the op or its slowest port.
    auto evacuate = [&](uint64_t ns, bool first) {
        double bytes = ns * 4.0;
        return std::max({pe.vector_op_time(uint32_t(ns), first ? 1 : 2, psum_fp32).ns, psum_ns(pe, bytes),
                         sbuf_ns(pe, bytes)});
    };
    // Block steps (bm, bn, bk) by the sizes a ragged last block of each dimension takes. A step:
    // its matmuls, its accumulator passes, and its A and B loads (one DMA instruction each, from
    // its start latency). With both operands double-buffered a step's loads run during the
    // previous step's matmuls, so a step lasts as long as the longest of the three; with a single
    // buffer the loads wait for the matmuls, so the two add up.
    const bool overlapped = b.a_bufs >= 2 && b.b_bufs >= 2;
    // A block's rows are contiguous runs of its columns: a run shorter than the HBM interleave
    // (one pseudo-channel chunk, which spans two bank groups) keeps fewer banks busy.
    auto run_rate = [&](uint64_t run_elements) { return rates.run_rate(double(run_elements * e)); };
    double steady = 0;
    for (const Part& pm : parts(s.m, b.bm))
        for (const Part& pn : parts(s.n, b.bn)) {
            const double blocks = double(pm.count * pn.count);
            const auto mt = parts(pm.size, s.tile_m), nt = parts(pn.size, s.tile_n);
            double per_k_tile = 0, evac_first = 0, evac_add = 0;
            for (const Part& a : mt)
                for (const Part& n : nt) {
                    per_k_tile += double(a.count * n.count) * matmul(a.size, n.size);
                    evac_first += double(a.count * n.count) * evacuate(n.size, true);
                    evac_add += double(a.count * n.count) * evacuate(n.size, false);
                }
            // The block's C rows out share the DMA rate with the loads of the next block's steps.
            const double store = double(pm.size * pn.size * e) / run_rate(pn.size) / double(ceil_div(s.k, b.bk));
            bool first_done = false;
            for (const Part& pk : parts(s.k, b.bk)) {
                double tensor = double(ceil_div(pk.size, s.tile_k)) * per_k_tile;
                double load = rates.dma_start_ns + double(pk.size * pm.size * e) / run_rate(pm.size) +
                              double(pk.size * pn.size * e) / run_rate(pn.size);
                auto step = [&](double vector, double extra) {
                    return overlapped ? std::max({tensor, vector, load + extra}) : std::max(tensor + load + extra, vector);
                };
                double firsts = first_done ? 0 : 1, others = double(pk.count) - firsts;
                first_done = true;
                steady += blocks * (firsts * step(evac_first, store) + others * step(evac_add, store));
                c.tensor_ns += blocks * double(pk.count) * tensor;
                c.vector_ns += blocks * (firsts * evac_first + others * evac_add);
            }
            // The accumulator to the output type, per row tile of the block (scalar engine).
            for (const Part& a : mt)
                c.scalar_ns += blocks * double(a.count) *
                               std::max({pe.scalar_op_time(uint32_t(pn.size), uint32_t(a.size)).ns,
                                         sbuf_ns(pe, pn.size * 4.0), sbuf_ns(pe, double(pn.size * e))});
        }
    // HBM: A once per column block, B once per row block, C once; loads and stores share the rate.
    const uint64_t m_blocks = ceil_div(s.m, b.bm), n_blocks = ceil_div(s.n, b.bn);
    c.hbm_bytes = (double(s.m) * s.k * n_blocks + double(s.k) * s.n * m_blocks + double(s.m) * s.n) * e;
    // Each block at the rate of its own runs (a ragged last block's are shorter).
    for (const Part& pm : parts(s.m, b.bm))
        c.dma_ns += double(pm.count * pm.size) * double(s.k) * double(n_blocks) * e / run_rate(pm.size);
    for (const Part& pn : parts(s.n, b.bn))
        c.dma_ns += double(pn.count * pn.size) * (double(s.k) * m_blocks + double(s.m)) * e / run_rate(pn.size);
    const double bm = double(std::min<uint64_t>(b.bm, s.m)), bn = double(std::min<uint64_t>(b.bn, s.n));
    const double bk = double(std::min<uint64_t>(b.bk, s.k));
    c.startup_ns = pe.pipeline_fill.ns + rates.dma_start_ns + bk * bm * e / run_rate(uint64_t(bm)) +
                   bk * bn * e / run_rate(uint64_t(bn));
    c.drain_ns = rates.dma_start_ns + bm * bn * e / run_rate(uint64_t(bn)) + pe.pipeline_tail.ns;
    c.total_ns = std::max({steady, c.scalar_ns, c.dma_ns}) + c.startup_ns + c.drain_ns;
    const std::pair<const char*, double> busy[] = {
        {"tensor", c.tensor_ns}, {"vector", c.vector_ns}, {"scalar", c.scalar_ns}, {"dma", c.dma_ns}};
    c.bound = std::max_element(std::begin(busy), std::end(busy), [](auto& x, auto& y) { return x.second < y.second; })->first;
    c.sbuf_bytes = gemm_sbuf_bytes(s, b);
    c.psum_bytes = gemm_psum_bytes(s, b, pe);
    return c;
}

std::vector<GemmBlocking> gemm_blocking_candidates(const GemmShape& s, const PeConfig& pe) {
    std::vector<GemmBlocking> out;
    for (uint32_t bm : block_sizes(s.m, s.tile_m))
        for (uint32_t bn : block_sizes(s.n, s.tile_n))
            for (uint32_t bk : block_sizes(s.k, s.tile_k))
                for (uint32_t a : {1u, 2u})
                    for (uint32_t b : {1u, 2u})
                        for (uint32_t p : {2u, 4u, 8u}) {
                            GemmBlocking g{bm, bn, bk, a, b, p};
                            if (gemm_blocking_fits(s, g, pe).empty())
                                out.push_back(g);
                        }
    return out;
}

std::vector<RankedBlocking> gemm_blocking_search(const GemmShape& s, const PeConfig& pe, const GemmRates& rates,
                                                 size_t keep) {
    std::vector<RankedBlocking> ranked;
    for (const GemmBlocking& b : gemm_blocking_candidates(s, pe))
        ranked.push_back({b, gemm_blocking_cost(s, b, pe, rates)});
    auto key = [](const RankedBlocking& r) {
        const GemmBlocking& b = r.blocking;
        return std::make_tuple(r.cost.total_ns, r.cost.hbm_bytes, r.cost.sbuf_bytes, -int64_t(b.psum_bufs),
                               -int64_t(b.bk), -int64_t(b.bm), -int64_t(b.bn), b.a_bufs, b.b_bufs);
    };
    std::sort(ranked.begin(), ranked.end(), [&](const RankedBlocking& x, const RankedBlocking& y) { return key(x) < key(y); });
    if (ranked.size() > keep)
        ranked.resize(keep);
    return ranked;
}

std::string plan_gemm_cores(const std::string& cores_text, uint32_t platform_cores, uint32_t& cores) {
    if (cores_text == "all") {
        cores = platform_cores;
        return "";
    }
    try {
        size_t used = 0;
        long v = std::stol(cores_text, &used);
        if (used != cores_text.size() || v < 1)
            return fmt::format("workload.cores='{}' must be 1..{} or all", cores_text, platform_cores);
        // Compared before narrowing: 4294967297 must not become 1.
        if (v > long(platform_cores))
            return fmt::format("workload.cores={} but the platform has {} NeuronCores (use 1..{} or all)",
                               cores_text, platform_cores, platform_cores);
        cores = uint32_t(v);
    } catch (const std::exception&) {
        return fmt::format("workload.cores='{}' must be 1..{} or all", cores_text, platform_cores);
    }
    return "";
}

std::string plan_gemm(const GemmWorkload& w, uint32_t cores, const PeConfig& pe, const GemmRates& rates,
                      GemmPlan& out) {
    GemmShape core;
    core.k = w.k, core.n = w.n, core.dtype = w.dtype;
    core.tile_m = w.tile_m, core.tile_k = w.tile_k, core.tile_n = w.tile_n;
    // Whole matmul tiles per core, the last core the rest; no more cores than that leaves rows for.
    uint64_t per_core = ceil_div(ceil_div(w.m, cores), w.tile_m) * w.tile_m;
    core.m = std::min<uint64_t>(per_core, w.m);
    out.cores = uint32_t(ceil_div(w.m, core.m));
    out.m = w.m, out.k = w.k, out.n = w.n, out.rows_per_core = core.m;
    out.core = core;
    GemmBlocking probe{core.tile_m, core.tile_n, core.tile_k, 1, 1, 2};
    std::string tile = gemm_blocking_fits(core, probe, pe);
    if (!tile.empty())
        return "workload.tile_m/tile_k/tile_n: " + tile;
    auto ranked = gemm_blocking_search(core, pe, rates);
    if (ranked.empty())
        return fmt::format("workload.n={}: no blocking of {} x {} x {} fits the PE: even one {} x {} block of the "
                           "output needs {} per SBUF partition (pe.sbuf_partition_bytes={})",
                           w.n, core.m, w.k, w.n, core.tile_m, core.tile_n, format_bytes(gemm_sbuf_bytes(core, probe)),
                           format_bytes(pe.sbuf_partition_bytes));
    out.chosen = ranked.front();
    return "";
}

} // namespace nctlm::analytic
