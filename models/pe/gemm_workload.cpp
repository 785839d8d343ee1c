#include "models/pe/gemm_workload.h"

#include <fmt/format.h>

namespace nctlm {

const FieldList<GemmWorkload>& GemmWorkload::fields() {
    using C = GemmWorkload;
    static const FieldList<C> f = {
        count("m", &C::m, nullptr, 1, 1 << 20, "rows of A and C (the stationary operand's columns)"),
        count("k", &C::k, nullptr, 1, 1 << 20, "contraction length"),
        count("n", &C::n, nullptr, 1, 1 << 20, "columns of B and C (the moving operand's columns)"),
        choice("dtype", &C::dtype,
               {{"bf16", Dtype::Bf16}, {"fp16", Dtype::Fp16}, {"fp8", Dtype::Fp8}, {"fp32", Dtype::Fp32}},
               "bf16", "operand element type (PSUM accumulates in fp32)"),
        count("tiles", &C::tiles, "1", 1, 1000000, "GEMM tiles streamed through the pipeline"),
        count("tile_m", &C::tile_m, "128", 1, 1024, "stationary columns per matmul (<= pe.tensor_cols)"),
        count("tile_k", &C::tile_k, "128", 1, 1024, "contraction rows per matmul (<= pe.tensor_rows)"),
        count("tile_n", &C::tile_n, "512", 1, 65536, "moving columns per matmul (<= pe.moving_max)"),
        count("buffers", &C::buffers, "2", 1, 64,
              "N-buffering: SBUF input/output and PSUM slots in flight (tile-stream mode; a whole GEMM's come from its "
              "blocking search)"),
        flag("weights_resident", &C::weights_resident, "true",
             "B (K x N) loaded into SBUF once before the pipeline; false: streamed with every tile"),
        text("cores", &C::cores, "",
             "unset: m x k x n is one tile streamed `tiles` times on one core; 1 | all | N: m x k x n is the "
             "whole GEMM, split by output rows over that many NeuronCores (docs/models/pe.md)"),
    };
    return f;
}

uint32_t GemmWorkload::psum_banks_per_tile(const PeConfig& pe) const {
    uint64_t per_partition = uint64_t(n) * 4; // fp32 accumulators along the free axis
    return uint32_t((per_partition + pe.psum_bank_bytes() - 1) / pe.psum_bank_bytes()) * blocks(m, tile_m);
}

std::string GemmWorkload::check(const PeConfig& pe) const {
    if (tile_m > pe.tensor_cols)
        return fmt::format("workload.tile_m={} exceeds the array's {} columns (pe.tensor_cols)", tile_m,
                           pe.tensor_cols);
    if (tile_k > pe.tensor_rows)
        return fmt::format("workload.tile_k={} exceeds the array's {} rows (pe.tensor_rows)", tile_k,
                           pe.tensor_rows);
    if (tile_n > pe.moving_max)
        return fmt::format("workload.tile_n={} exceeds pe.moving_max={}", tile_n, pe.moving_max);
    if (tile_k > pe.sbuf_partitions)
        return fmt::format("workload.tile_k={} exceeds pe.sbuf_partitions={}", tile_k, pe.sbuf_partitions);
    uint32_t banks = psum_banks_per_tile(pe) * buffers;
    if (banks > pe.psum_banks)
        return fmt::format("workload needs {} PSUM banks ({} per tile x {} buffers) but pe.psum_banks={}",
                           banks, psum_banks_per_tile(pe), buffers, pe.psum_banks);
    // SBUF per partition: A and C slots for every buffer, plus B (once if resident).
    uint32_t parts = fetch_partitions();
    uint64_t a_pp = (a_bytes() + parts - 1) / parts, b_pp = (b_bytes() + parts - 1) / parts;
    uint64_t c_pp = (c_bytes() + std::min(m, pe.sbuf_partitions) - 1) / std::min(m, pe.sbuf_partitions);
    uint64_t need = buffers * (a_pp + c_pp) + b_pp * (weights_resident ? 1 : buffers);
    if (need > pe.sbuf_partition_bytes)
        return fmt::format("workload needs {} per SBUF partition but pe.sbuf_partition_bytes={}",
                           format_bytes(need), format_bytes(pe.sbuf_partition_bytes));
    return "";
}

} // namespace nctlm
