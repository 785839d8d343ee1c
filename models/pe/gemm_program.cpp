#include "models/pe/gemm_program.h"

#include <array>
#include <stdexcept>

namespace nctlm {

const char* stage_name(Stage s) {
    switch (s) {
    case Stage::Weights:
        return "weights";
    case Stage::DmaIn:
        return "dma_in";
    case Stage::Fetch:
        return "fetch";
    case Stage::Gemm:
        return "gemm";
    case Stage::Evacuate:
        return "evacuate";
    case Stage::WriteBack:
        return "write_back";
    }
    return "?";
}

Program make_weight_preload(const GemmWorkload& w, const GemmAddresses& a) {
    Program p;
    p.tiles = 1;
    Instruction d;
    d.op = Op::DmaRead;
    d.unit = Unit::DmaIn;
    d.stage = Stage::Weights;
    d.address = a.b;
    d.bytes = w.b_bytes();
    d.partitions = w.fetch_partitions();
    p.instructions.push_back(d);
    return p;
}

namespace {

// Tile i's instructions in program order, appended to `out`.
void gemm_tile(const GemmWorkload& w, const PeConfig& pe, const GemmAddresses& a, uint32_t i,
               std::vector<Instruction>& out) {
    using S = GemmSemaphores;
    const uint32_t B = w.buffers, F = pe.operand_buffers;
    const uint32_t mb = GemmWorkload::blocks(w.m, w.tile_m), kb = GemmWorkload::blocks(w.k, w.tile_k),
                   nb = GemmWorkload::blocks(w.n, w.tile_n);
    auto& p = out;
    {
        const uint32_t slot = i % B;
        const uint64_t round = i / B + 1; // the slot semaphores' value once tile i is through
        // DMA-in: A (and B when streamed) into the slot, once the slot's previous tile is fetched.
        Instruction in;
        in.op = Op::DmaRead;
        in.unit = Unit::DmaIn;
        in.stage = Stage::DmaIn;
        in.tile = i;
        const uint64_t a_index = a.col_blocks ? i / a.col_blocks : i, b_index = a.col_blocks ? i % a.col_blocks : i;
        in.address = a.a + a_index * w.a_bytes();
        in.bytes = w.a_bytes();
        in.partitions = w.fetch_partitions();
        if (i >= B)
            in.waits.push_back({S::fetch, i - B + 1});
        in.signal = int(S::dma_in(slot));
        p.push_back(in);
        if (!w.weights_resident) { // B rides along as a second instruction on the same slot
            Instruction inb = in;
            inb.address = a.b + b_index * w.b_bytes();
            inb.bytes = w.b_bytes();
            inb.waits.clear();
            inb.signal = int(S::dma_in(slot));
            p.push_back(inb);
        }
        // Fetch both operands SBUF -> array once they are in and a staging buffer is free.
        Instruction f;
        f.op = Op::Fetch;
        f.unit = Unit::Fetch;
        f.stage = Stage::Fetch;
        f.tile = i;
        f.bytes = w.fetch_bytes();
        f.partitions = w.fetch_partitions();
        f.waits.push_back({S::dma_in(slot), round * (w.weights_resident ? 1 : 2)});
        if (i >= F)
            f.waits.push_back({S::gemm, i - F + 1});
        f.signal = S::fetch;
        p.push_back(f);
        // Matmuls: every (m, n) output block accumulates over the K blocks in its PSUM slot.
        size_t first = p.size();
        for (uint32_t bm = 0; bm < mb; ++bm)
            for (uint32_t bn = 0; bn < nb; ++bn)
                for (uint32_t bk = 0; bk < kb; ++bk) {
                    Instruction mm;
                    mm.op = Op::Matmul;
                    mm.unit = Unit::Tensor;
                    mm.stage = Stage::Gemm;
                    mm.tile = i;
                    mm.n_stationary = GemmWorkload::block_size(w.m, w.tile_m, bm);
                    mm.n_moving = GemmWorkload::block_size(w.n, w.tile_n, bn);
                    mm.k_rows = GemmWorkload::block_size(w.k, w.tile_k, bk);
                    mm.dtype = w.dtype;
                    mm.partitions = mm.n_stationary; // output rows land on PSUM partitions
                    mm.psum_bytes = uint64_t(mm.n_stationary) * mm.n_moving * 4;
                    p.push_back(mm);
                }
        p[first].waits.push_back({S::fetch, i + 1});
        if (i >= B)
            p[first].waits.push_back({S::evacuate, i - B + 1});
        p.back().signal = S::gemm;
        // Evacuate PSUM -> SBUF (vector copy per output block) once the slot's old C is written back.
        first = p.size();
        for (uint32_t bm = 0; bm < mb; ++bm)
            for (uint32_t bn = 0; bn < nb; ++bn) {
                Instruction c;
                c.op = Op::Copy;
                c.unit = Unit::Vector;
                c.stage = Stage::Evacuate;
                c.tile = i;
                c.partitions = GemmWorkload::block_size(w.m, w.tile_m, bm);
                c.n_free = GemmWorkload::block_size(w.n, w.tile_n, bn);
                c.psum_bytes = uint64_t(c.partitions) * c.n_free * 4;
                c.bytes = uint64_t(c.partitions) * c.n_free * dtype_bytes(w.dtype);
                c.dtype = w.dtype;
                p.push_back(c);
            }
        p[first].waits.push_back({S::gemm, i + 1});
        if (i >= B)
            p[first].waits.push_back({S::dma_out(B, slot), round - 1});
        p.back().signal = S::evacuate;
        // Write C back to HBM.
        Instruction out;
        out.op = Op::DmaWrite;
        out.unit = Unit::DmaOut;
        out.stage = Stage::WriteBack;
        out.tile = i;
        out.address = a.c + uint64_t(i) * w.c_bytes();
        out.bytes = w.c_bytes();
        out.partitions = std::min(w.m, pe.sbuf_partitions);
        out.queue = 1;
        out.waits.push_back({S::evacuate, i + 1});
        out.signal = int(S::dma_out(B, slot));
        p.push_back(out);
    }
}

// Instructions per tile of each unit, in the order of gemm_tile.
std::array<uint64_t, kUnits> per_tile(const GemmWorkload& w) {
    const uint64_t mb = GemmWorkload::blocks(w.m, w.tile_m), kb = GemmWorkload::blocks(w.k, w.tile_k),
                   nb = GemmWorkload::blocks(w.n, w.tile_n);
    std::array<uint64_t, kUnits> n{};
    n[int(Unit::DmaIn)] = w.weights_resident ? 1 : 2;
    n[int(Unit::Fetch)] = 1;
    n[int(Unit::Tensor)] = mb * nb * kb;
    n[int(Unit::Vector)] = mb * nb;
    n[int(Unit::DmaOut)] = 1;
    return n;
}

// The GEMM program generated tile by tile as each unit reaches it: memory stays a few tiles'
// instructions whatever the tile count (a 4800-tile stream held whole took ~30 MB).
class GemmSource : public ProgramSource {
public:
    GemmSource(const GemmWorkload& w, const PeConfig& pe, const GemmAddresses& a)
        : w_(w), pe_(pe), a_(a), per_tile_(per_tile(w)) {
        for (int u = 0; u < kUnits; ++u)
            tile_size_ += per_tile_[u];
        cache_tile_.fill(UINT64_MAX);
    }
    uint64_t count(Unit u) const override { return per_tile_[int(u)] * w_.tiles; }
    uint64_t at(Unit u, uint64_t k, Instruction& out) const override {
        const uint64_t n = per_tile_[int(u)], tile = k / n, j = k % n;
        std::vector<Instruction>& cache = cache_[int(u)];
        if (cache_tile_[int(u)] != tile) {  // each unit walks the tiles in order: one generation each
            cache.clear();
            gemm_tile(w_, pe_, a_, uint32_t(tile), cache);
            cache_tile_[int(u)] = tile;
        }
        // Program order inside a tile: this unit's instructions start after the earlier units'
        // (DMA-in, fetch, matmuls, copies, DMA-out).
        uint64_t offset = 0;
        for (Unit v : {Unit::DmaIn, Unit::Fetch, Unit::Tensor, Unit::Vector, Unit::DmaOut}) {
            if (v == u)
                break;
            offset += per_tile_[int(v)];
        }
        out = cache[offset + j];
        return tile * tile_size_ + offset + j;
    }

private:
    GemmWorkload w_;
    PeConfig pe_;
    GemmAddresses a_;
    std::array<uint64_t, kUnits> per_tile_;
    uint64_t tile_size_ = 0;
    mutable std::array<std::vector<Instruction>, kUnits> cache_;
    mutable std::array<uint64_t, kUnits> cache_tile_;
};

} // namespace

namespace {
// A checked GEMM program without instructions yet.
Program gemm_program_frame(const GemmWorkload& w, const PeConfig& pe) {
    std::string problem = w.check(pe);
    if (!problem.empty())
        throw std::invalid_argument(problem);
    Program p;
    p.tiles = w.tiles;
    p.semaphores = GemmSemaphores::count(w.buffers);
    return p;
}
} // namespace

Program make_gemm_program(const GemmWorkload& w, const PeConfig& pe, const GemmAddresses& a) {
    Program p = gemm_program_frame(w, pe);
    for (uint32_t i = 0; i < w.tiles; ++i)
        gemm_tile(w, pe, a, i, p.instructions);
    return p;
}

Program make_gemm_stream(const GemmWorkload& w, const PeConfig& pe, const GemmAddresses& a) {
    Program p = gemm_program_frame(w, pe);
    p.source = std::make_shared<GemmSource>(w, pe, a);
    return p;
}

} // namespace nctlm
