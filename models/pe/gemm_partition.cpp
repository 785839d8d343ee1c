#include "models/pe/gemm_partition.h"

#include <fmt/format.h>

namespace nctlm {

std::string plan_gemm(const GemmWorkload& s, const std::string& cores_text, uint32_t platform_cores,
                      const PeConfig& pe, GemmPartition& out) {
    uint32_t cores = 0;
    if (cores_text == "all") {
        cores = platform_cores;
    } else {
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
    }
    if (s.m % cores != 0 || (s.m / cores) % s.tile_m != 0)
        return fmt::format("workload.m={} does not split into {} cores x whole row blocks of tile_m={} (m must be a "
                           "multiple of {})",
                           s.m, cores, s.tile_m, cores * s.tile_m);
    if (s.n % s.tile_n != 0)
        return fmt::format("workload.n={} is not a multiple of tile_n={}", s.n, s.tile_n);
    uint32_t rows = s.m / cores;
    GemmWorkload t = s;
    t.k = s.k;
    t.n = s.tile_n;
    t.weights_resident = false;
    std::string last;
    for (uint32_t mt = std::min(rows, pe.sbuf_partitions * 4) / s.tile_m * s.tile_m; mt >= s.tile_m; mt -= s.tile_m) {
        if (rows % mt != 0)
            continue;
        t.m = mt;
        last = t.check(pe);
        if (!last.empty())
            continue;
        out.cores = cores;
        out.rows_per_core = rows;
        out.row_blocks = rows / mt;
        out.col_blocks = s.n / s.tile_n;
        t.tiles = out.row_blocks * out.col_blocks;
        out.tile = t;
        return "";
    }
    return fmt::format("no tile of {} x {} x {} ({} rows of one core) fits the PE: {} (reduce workload.k or "
                       "workload.buffers)",
                       s.tile_m, s.k, s.tile_n, rows, last);
}

} // namespace nctlm
