// The GEMM program generated on demand (make_gemm_stream) is the materialized program, unit by
// unit and index by index: the PE runs the same instructions whichever form it is given.
#include "models/common/config.h"
#include "models/pe/gemm_program.h"
#include "tests/support.h"

#include <gtest/gtest.h>

using namespace nctlm;

namespace {
void expect_same_streams(const GemmWorkload& w) {
    PeConfig pe = ConfigTree::from_file(test::platform("trn1")).load<PeConfig>("pe");
    GemmAddresses a{1 << 20, 64 << 20, 128 << 20, 0};
    Program whole = make_gemm_program(w, pe, a), stream = make_gemm_stream(w, pe, a);
    ASSERT_TRUE(stream.source);
    EXPECT_TRUE(stream.instructions.empty());
    EXPECT_EQ(stream.size(), whole.instructions.size());
    EXPECT_EQ(stream.semaphores, whole.semaphores);
    for (int u = 0; u < kUnits; ++u) {
        std::vector<size_t> indices;
        for (size_t i = 0; i < whole.instructions.size(); ++i)
            if (int(whole.instructions[i].unit) == u)
                indices.push_back(i);
        ASSERT_EQ(stream.source->count(Unit(u)), indices.size()) << "unit " << u;
        Instruction got;
        for (uint64_t k = 0; k < indices.size(); ++k) {
            ASSERT_EQ(stream.source->at(Unit(u), k, got), indices[k]) << "unit " << u << " k " << k;
            const Instruction& want = whole.instructions[indices[k]];
            ASSERT_EQ(got.op, want.op);
            ASSERT_EQ(got.tile, want.tile);
            ASSERT_EQ(got.address, want.address);
            ASSERT_EQ(got.bytes, want.bytes);
            ASSERT_EQ(got.signal, want.signal);
            ASSERT_EQ(got.waits.size(), want.waits.size());
            for (size_t j = 0; j < got.waits.size(); ++j) {
                ASSERT_EQ(got.waits[j].sem, want.waits[j].sem);
                ASSERT_EQ(got.waits[j].value, want.waits[j].value);
            }
        }
    }
}
} // namespace

TEST(GemmStream, ResidentWeightsSameInstructionsAsTheWholeProgram) {
    GemmWorkload w;
    w.m = 32, w.k = 3072, w.n = 32, w.tiles = 37, w.buffers = 4, w.weights_resident = true;
    w.tile_m = 128, w.tile_k = 128, w.tile_n = 512;
    expect_same_streams(w);
}

TEST(GemmStream, StreamedWeightsSameInstructionsAsTheWholeProgram) {
    GemmWorkload w;
    w.m = 256, w.k = 1024, w.n = 512, w.tiles = 9, w.buffers = 2, w.weights_resident = false;
    w.tile_m = 128, w.tile_k = 128, w.tile_n = 512;
    expect_same_streams(w);
}
