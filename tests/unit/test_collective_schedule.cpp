// Collective schedules (models/collective) checked by executing them symbolically: every region a
// transfer reads holds what the algorithm says (which chunk, summed over which ranks), was written
// by a transfer the reader waits for, and every rank ends with the collective's result; and their
// bytes and steps against the closed forms (models/analytic/collective_model.h), on random sizes,
// rank counts and slicings.
#include "models/analytic/collective_model.h"
#include "models/collective/collective_program.h"
#include "models/collective/collective_schedule.h"
#include "tests/xorshift.h"

#include <gtest/gtest.h>
#include <map>
#include <stdexcept>
#include <tuple>

using namespace nctlm;
using namespace nctlm::collective;

namespace {

struct Value {
    uint64_t chunk = 0;
    uint64_t ranks = 0;  // bit r: rank r's contribution is summed in
};

struct Cell {
    Value v;
    int64_t writer = -1;  // the transfer that wrote it (-1: the rank's input)
};

using Key = std::tuple<uint32_t, Buffer, uint64_t>;  // rank, buffer, offset

// Runs the transfers in round order; fails the test on the first inconsistency.
std::map<Key, Cell> execute(const Schedule& s) {
    const Spec& sp = s.spec;
    const uint64_t C = s.chunk_bytes;
    std::map<Key, Cell> mem;
    // Inputs, cut at every offset a transfer reads them at.
    for (const Transfer& t : s.transfers)
        for (const Region* r : {&t.src, t.add ? &*t.add : nullptr})
            if (r && r->buffer == Buffer::Input) {
                uint64_t chunk = sp.op == Operation::AllGather ? t.rank : r->offset / C;
                mem[{t.rank, Buffer::Input, r->offset}] = {{chunk, uint64_t(1) << t.rank}, -1};
            }
    std::vector<uint32_t> order(s.transfers.size());
    for (uint32_t i = 0; i < order.size(); ++i)
        order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](uint32_t a, uint32_t b) { return s.transfers[a].round < s.transfers[b].round; });
    for (uint32_t id : order) {
        const Transfer& t = s.transfers[id];
        auto read = [&](const Region& r) {
            auto it = mem.find({t.rank, r.buffer, r.offset});
            EXPECT_NE(it, mem.end()) << "transfer " << id << " reads unwritten " << buffer_name(r.buffer) << "+"
                                     << r.offset << " on rank " << t.rank;
            if (it == mem.end())
                return Value{};
            if (it->second.writer >= 0) {
                bool waits = std::find(t.after.begin(), t.after.end(), uint32_t(it->second.writer)) != t.after.end();
                EXPECT_TRUE(waits) << "transfer " << id << " reads what transfer " << it->second.writer
                                   << " wrote without waiting for it";
                // A remote input is of an earlier round (the sync order's proof needs it); a local
                // one may share the round but comes earlier in the rank's order.
                const Transfer& w = s.transfers[size_t(it->second.writer)];
                if (w.rank != t.rank) {
                    EXPECT_LT(w.round, t.round);
                } else {
                    EXPECT_LE(w.round, t.round);
                    EXPECT_LT(it->second.writer, int64_t(id));
                }
            }
            return it->second.v;
        };
        Value v = read(t.src);
        if (t.add) {
            Value w = read(*t.add);
            EXPECT_EQ(v.chunk, w.chunk) << "transfer " << id << " adds different chunks";
            EXPECT_EQ(v.ranks & w.ranks, 0u) << "transfer " << id << " counts a rank twice";
            v.ranks |= w.ranks;
        }
        for (auto& d : t.dests)
            mem[{d.rank, d.at.buffer, d.at.offset}] = {v, int64_t(id)};
    }
    return mem;
}

void check_result(const Schedule& s) {
    auto mem = execute(s);
    const Spec& sp = s.spec;
    const uint64_t all = sp.ranks == 64 ? ~0ull : (uint64_t(1) << sp.ranks) - 1;
    for (auto& [key, cell] : mem) {
        auto [rank, buffer, offset] = key;
        if (buffer != Buffer::Output)
            continue;
        uint64_t chunk = sp.op == Operation::ReduceScatter ? rank : offset / s.chunk_bytes;
        EXPECT_EQ(cell.v.chunk, chunk) << "rank " << rank << " output+" << offset;
        uint64_t want = sp.op == Operation::AllGather ? uint64_t(1) << chunk : all;
        EXPECT_EQ(cell.v.ranks, want) << "rank " << rank << " output+" << offset;
    }
    // Every byte of every rank's output was written.
    std::map<uint32_t, uint64_t> written;
    for (const Transfer& t : s.transfers)
        for (auto& d : t.dests)
            if (d.at.buffer == Buffer::Output)
                written[d.rank] += t.bytes;
    for (uint32_t r = 0; r < sp.ranks; ++r)
        EXPECT_EQ(written[r], s.output_bytes) << "rank " << r;
}

} // namespace

TEST(CollectiveSchedule, EveryOpAndAlgorithmComputesItsResultOnRandomShapes) {
    test::XorShift64 rng{2024};
    for (int i = 0; i < 150; ++i) {
        Spec sp;
        sp.op = Operation(rng() % 3);
        sp.algorithm = Algorithm(rng() % 2);
        sp.ranks = 2 + uint32_t(rng() % 15);
        sp.elem_bytes = 1u << (rng() % 3);
        sp.slices = 1 + uint32_t(rng() % 4);
        sp.bytes = uint64_t(sp.ranks) * sp.elem_bytes * (1 + rng() % 300);
        SCOPED_TRACE(std::string(op_name(sp.op)) + " " + algorithm_name(sp.algorithm) + " ranks " +
                     std::to_string(sp.ranks) + " bytes " + std::to_string(sp.bytes) + " slices " +
                     std::to_string(sp.slices));
        check_result(make_schedule(sp));
    }
}

TEST(CollectiveSchedule, RingBytesAndStepsMatchTheClosedForm) {
    test::XorShift64 rng{99};
    for (int i = 0; i < 60; ++i) {
        Spec sp;
        sp.op = Operation(rng() % 3);
        sp.ranks = 2 + uint32_t(rng() % 15);
        sp.elem_bytes = 4;
        sp.slices = 1 + uint32_t(rng() % 3);
        sp.bytes = uint64_t(sp.ranks) * 4 * (8 + rng() % 1000);
        Schedule s = make_schedule(sp);
        auto f = analytic::ring_closed_form(sp.op, sp.ranks, sp.bytes, 1e9, 0);
        EXPECT_EQ(s.steps, f.steps);
        // Each rank sends only to the next, steps x chunk in all: what every ring link carries.
        std::map<std::pair<uint32_t, uint32_t>, uint64_t> link;
        uint32_t last_step = 0;
        for (const Transfer& t : s.transfers) {
            for (auto& d : t.dests)
                if (d.rank != t.rank) {
                    EXPECT_EQ(d.rank, (t.rank + 1) % sp.ranks);
                    link[{t.rank, d.rank}] += t.bytes;
                    last_step = std::max(last_step, t.step);
                }
        }
        EXPECT_EQ(link.size(), sp.ranks);
        for (auto& [_, bytes] : link)
            EXPECT_DOUBLE_EQ(double(bytes), f.bytes_per_link);
        EXPECT_EQ(last_step + 1, f.steps);  // remote sends happen on steps 0 .. steps - 1
    }
}

TEST(CollectiveSchedule, TreeEdgesCarryTheClosedFormBytes) {
    for (auto op : {Operation::AllReduce, Operation::AllGather, Operation::ReduceScatter})
        for (uint32_t n : {2u, 3u, 5u, 8u, 13u, 16u}) {
            Spec sp{op, Algorithm::Tree, n, uint64_t(n) * 4 * 96, 4, 3};
            Schedule s = make_schedule(sp);
            auto edges = analytic::tree_edge_bytes(op, n, sp.bytes);
            std::map<std::pair<uint32_t, uint32_t>, uint64_t> moved;
            for (const Transfer& t : s.transfers)
                for (auto& d : t.dests)
                    if (d.rank != t.rank)
                        moved[{t.rank, d.rank}] += t.bytes;
            for (auto& e : edges) {
                uint32_t parent = uint32_t(tree_parent(e.child));
                EXPECT_DOUBLE_EQ(double(moved[{e.child, parent}]), e.up_bytes) << op_name(op) << " n " << n;
                EXPECT_DOUBLE_EQ(double(moved[{parent, e.child}]), e.down_bytes) << op_name(op) << " n " << n;
            }
            EXPECT_EQ(moved.size(), 2 * (n - 1) - (op == Operation::ReduceScatter ? 0 : 0));
            EXPECT_EQ(s.steps, analytic::tree_steps(n));
        }
}

TEST(CollectiveSchedule, BadSpecsAreRefusedNamingTheProblem) {
    auto fails = [](Spec sp, const std::string& words) {
        try {
            make_schedule(sp);
            ADD_FAILURE() << "accepted";
        } catch (const std::invalid_argument& e) {
            EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
        }
    };
    fails({Operation::AllReduce, Algorithm::Ring, 1, 1024, 4, 2}, "at least 2 ranks");
    fails({Operation::AllReduce, Algorithm::Ring, 3, 1024, 4, 2}, "multiple of 12");
    fails({Operation::AllGather, Algorithm::Tree, 4, 1022, 4, 2}, "multiple of 16");
    EXPECT_FALSE(parse_algorithm("mesh"));
    EXPECT_EQ(*parse_op("allr"), Operation::AllReduce);
    EXPECT_DOUBLE_EQ(bus_factor(Operation::AllReduce, 4), 1.5);
    EXPECT_DOUBLE_EQ(bus_factor(Operation::AllGather, 4), 0.75);
}

// The program of a rank: per tile two loads, an add and a store per destination for a reduction;
// the sync unit waits once per transfer with a remote input and signals once per remote output.
TEST(CollectiveProgram, InstructionCountsFollowTheSchedule) {
    Spec sp{Operation::AllReduce, Algorithm::Ring, 4, 4ull << 20, 4, 2};
    Schedule s = make_schedule(sp);
    std::vector<RankMemory> mem(4);
    for (uint32_t r = 0; r < 4; ++r)
        mem[r] = {r * (1ull << 30), r * (1ull << 30) + (64 << 20), r * (1ull << 30) + (128 << 20),
                  r * (1ull << 30) + (256 << 20)};
    PeConfig pe;
    pe.sbuf_partitions = 128;
    pe.sbuf_partition_bytes = 192 * 1024;
    ProgramOptions o;  // 128 x 8 KiB tiles = 1 MiB
    RankProgram p = make_rank_program(s, 1, mem, pe, o);
    uint64_t tiles = 0, reduce_tiles = 0, stores = 0, waits = 0, signals = 0;
    for (uint32_t id : s.by_rank[1]) {
        const Transfer& t = s.transfers[id];
        uint64_t n = (t.bytes + (1 << 20) - 1) >> 20;
        tiles += n;
        reduce_tiles += t.add ? n : 0;
        stores += n * t.dests.size();
        bool remote_in = false;
        for (uint32_t d : t.after)
            remote_in = remote_in || s.transfers[d].rank != 1;
        waits += remote_in;
        signals += t.remote();
    }
    EXPECT_EQ(p.loads, tiles + reduce_tiles);
    EXPECT_EQ(p.adds, reduce_tiles);
    EXPECT_EQ(p.stores, stores);
    uint64_t w = 0, g = 0;
    for (auto& a : p.sync)
        (a.wait ? w : g) += 1;
    EXPECT_EQ(w, waits);
    EXPECT_EQ(g, signals);
    EXPECT_EQ(p.program.instructions.size(), p.loads + p.adds + p.stores + p.sync.size());
    // Every store lands at an address of a rank's buffers, another rank's for a remote one.
    o.tile_partition_bytes = 96 * 1024;  // 3 buffers x 3 copies x 96 KiB: past SBUF
    EXPECT_THROW(make_rank_program(s, 1, mem, pe, o), std::invalid_argument);
}
