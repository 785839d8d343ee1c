#include "models/collective/collective_program.h"

#include <algorithm>
#include <stdexcept>

namespace nctlm::collective {

uint64_t RankMemory::at(const Region& r) const {
    switch (r.buffer) {
    case Buffer::Input: return input + r.offset;
    case Buffer::Output: return output + r.offset;
    case Buffer::Scratch: return scratch + r.offset;
    }
    return 0;
}

namespace {

enum Sem : uint32_t { kSync, kLoads, kAdds, kStores, kSems };

bool reduces(const Schedule& s) { return s.spec.op != Operation::AllGather; }

// What frees a tile buffer copy: the n-th add, or stores up to an ordinal.
struct Release {
    Sem sem = kAdds;
    uint64_t value = 0;
};

} // namespace

uint64_t sbuf_bytes_needed(const Schedule& s, const ProgramOptions& o) {
    return (reduces(s) ? 3 : 1) * uint64_t(o.buffers) * o.tile_partition_bytes;
}

RankProgram make_rank_program(const Schedule& s, uint32_t rank, const std::vector<RankMemory>& memory,
                              const PeConfig& pe, const ProgramOptions& o) {
    if (sbuf_bytes_needed(s, o) > pe.sbuf_partition_bytes)
        throw std::invalid_argument("collective tiles need " + std::to_string(sbuf_bytes_needed(s, o)) +
                                    " SBUF bytes per partition; the PE has " + std::to_string(pe.sbuf_partition_bytes));
    if (o.buffers == 0 || o.tile_partition_bytes < dtype_bytes(o.dtype))
        throw std::invalid_argument("collective tiles need at least one buffer of one element");
    const uint32_t parts = pe.sbuf_partitions, elem = dtype_bytes(o.dtype);
    const uint64_t tile_bytes = uint64_t(parts) * o.tile_partition_bytes;
    const uint64_t copy_bytes = o.tile_partition_bytes;
    const uint64_t a_base = 0, b_base = o.buffers * copy_bytes, c_base = 2 * o.buffers * copy_bytes;
    RankProgram out;
    Program& p = out.program;
    p.semaphores = kSems;
    p.tiles = 0;
    p.dma_records = false;
    std::vector<Instruction>& ins = p.instructions;

    const std::vector<Transfer>& all = s.transfers;
    const std::vector<uint32_t>& mine = s.by_rank.at(rank);
    // Per transfer of this rank: the ordinal of its last store (local dependencies, signals).
    std::vector<uint64_t> last_store(all.size(), 0);
    // The sync unit's order: waits hoisted ahead of pending signals of a later round.
    struct PendingSignal {
        uint32_t transfer, round;
    };
    std::vector<PendingSignal> pending;
    uint64_t sync_count = 0, loads = 0, adds = 0, stores = 0, tile_counter = 0, queue = 0;
    std::vector<Release> a_free(o.buffers), b_free(o.buffers), c_free(o.buffers);

    auto sync_instruction = [&](SyncAction a, std::vector<SemWait> waits) {
        Instruction i;
        i.op = nctlm::Op::Barrier;
        i.unit = Unit::Sync;
        i.stage = Stage::DmaIn;
        i.label = a.wait ? "cc wait" : "cc signal";
        i.waits = std::move(waits);
        i.signal = kSync;
        ins.push_back(i);
        out.sync.push_back(a);
        return ++sync_count;
    };
    auto emit_signal = [&](uint32_t t) { sync_instruction({false, t}, {{kStores, last_store[t]}}); };
    auto flush_signals = [&](uint32_t up_to_round, bool all_of_them) {
        size_t k = 0;
        for (size_t i = 0; i < pending.size(); ++i)
            if (all_of_them || pending[i].round <= up_to_round)
                k = i + 1;  // flush in order up to the last one that must go first
        for (size_t i = 0; i < k; ++i)
            emit_signal(pending[i].transfer);
        pending.erase(pending.begin(), pending.begin() + std::ptrdiff_t(k));
    };
    auto dma = [&](nctlm::Op op, uint64_t address, uint64_t bytes, uint32_t partitions, uint64_t sbuf_offset) {
        Instruction i;
        i.op = op;
        i.unit = op == nctlm::Op::DmaRead ? Unit::DmaIn : Unit::DmaOut;
        i.stage = op == nctlm::Op::DmaRead ? Stage::DmaIn : Stage::WriteBack;
        i.label = op == nctlm::Op::DmaRead ? "cc load" : "cc store";
        i.address = address;
        i.bytes = bytes;
        i.partitions = partitions;
        i.offset = sbuf_offset;
        i.contiguous = true;  // 1-D: descriptors built ahead, spread over the queues
        i.spread = true;
        i.descriptor_bytes = o.descriptor_bytes;
        i.queue = uint32_t(queue++ % o.dma_queues);
        i.shape[0] = partitions;
        i.shape[1] = uint32_t(std::min<uint64_t>(bytes / std::max<uint32_t>(1, partitions), UINT32_MAX));
        return i;
    };

    for (uint32_t tid : mine) {
        const Transfer& t = all[tid];
        // Waits: remote inputs through the sync unit; local ones on their stores.
        std::vector<SemWait> input_waits;
        bool remote_input = false;
        uint32_t max_dep_round = 0;
        for (uint32_t d : t.after) {
            if (all[d].rank == rank) {
                input_waits.push_back({kStores, last_store[d]});
            } else {
                remote_input = true;
                max_dep_round = std::max(max_dep_round, all[d].round);
            }
        }
        if (remote_input) {
            flush_signals(max_dep_round, false);
            input_waits.push_back({kSync, sync_instruction({true, tid}, {})});
        }
        const bool reduce = t.add.has_value();
        for (uint64_t off = 0; off < t.bytes; off += tile_bytes) {
            const uint64_t bytes = std::min(tile_bytes, t.bytes - off);
            const uint64_t elements = bytes / elem;
            const uint32_t np = uint32_t(std::max<uint64_t>(1, std::min<uint64_t>(parts, elements)));
            const uint64_t per_part = (elements + np - 1) / np;
            const uint32_t copy = uint32_t(tile_counter++ % o.buffers);
            auto with = [](std::vector<SemWait> w, const Release& r) {
                if (r.value > 0)
                    w.push_back({uint32_t(r.sem), r.value});
                return w;
            };
            // A tile of `region` into SBUF at `sbuf` once its copy there is free.
            auto load = [&](const Region& region, uint64_t sbuf, const Release& freed) {
                Instruction l = dma(nctlm::Op::DmaRead, memory[rank].at({region.buffer, region.offset + off}), bytes,
                                    np, sbuf);
                l.waits = with(input_waits, freed);
                l.signal = kLoads;
                l.signal_ordinal = ++loads;
                ins.push_back(l);
                out.load_bytes += bytes;
            };
            load(t.src, a_base + copy * copy_bytes, a_free[copy]);
            uint64_t data_ready_loads = loads;
            uint64_t src_sbuf = a_base + copy * copy_bytes;
            std::vector<SemWait> store_waits;
            if (reduce) {
                load(*t.add, b_base + copy * copy_bytes, b_free[copy]);
                Instruction v;
                v.op = nctlm::Op::VectorOp;
                v.unit = Unit::Vector;
                v.stage = Stage::Evacuate;
                v.label = "cc add";
                v.n_free = uint32_t(per_part);
                v.inputs = 2;
                v.partitions = np;
                v.offset = c_base + copy * copy_bytes;
                v.read_offset = a_base + copy * copy_bytes;
                v.sbuf_read_bytes = 2 * bytes;
                v.bytes = bytes;
                v.dtype = o.dtype;
                v.shape[0] = np;
                v.shape[1] = uint32_t(per_part);
                v.waits = with({{kLoads, loads}}, c_free[copy]);
                v.signal = kAdds;
                ins.push_back(v);
                ++adds;
                a_free[copy] = b_free[copy] = {kAdds, adds};
                store_waits.assign(1, SemWait{kAdds, adds});
                src_sbuf = c_base + copy * copy_bytes;
            } else {
                store_waits.assign(1, SemWait{kLoads, data_ready_loads});
            }
            for (const Transfer::Dest& d : t.dests) {
                Instruction st = dma(nctlm::Op::DmaWrite, memory.at(d.rank).at({d.at.buffer, d.at.offset + off}), bytes, np,
                                     src_sbuf);
                st.waits = store_waits;
                st.signal = kStores;
                st.signal_ordinal = ++stores;
                ins.push_back(st);
                out.store_bytes += bytes;
            }
            (reduce ? c_free[copy] : a_free[copy]) = {kStores, stores};
        }
        last_store[tid] = stores;
        if (t.remote())
            pending.push_back({tid, t.round});
    }
    flush_signals(0, true);
    out.loads = loads;
    out.stores = stores;
    out.adds = adds;
    return out;
}

} // namespace nctlm::collective
