// AddressSplit (models/flow/address_split.h): the bytes per stack x PC of a transfer equal a walk
// over every interleave piece, and equal keys mean equal splits — with and without hbm.pc_hash:
// fold, in the stack windows and the stack-interleaved window, on random transfers.
#include "models/common/config.h"
#include "models/flow/address_split.h"
#include "platforms/platform_config.h"
#include "tests/support.h"
#include "tests/xorshift.h"

#include <gtest/gtest.h>
#include <map>

using namespace nctlm;

namespace {

std::vector<double> walk(const HbmConfig& h, const AddressMap& map, uint64_t address, uint64_t bytes) {
    std::vector<double> on(size_t(h.stacks) * h.pseudo_channels, 0);
    for (uint64_t a = address; a < address + bytes;) {
        auto loc = map.map(a);
        uint64_t len = std::min(address + bytes - a, uint64_t(64) - a % 64);  // finer than any piece
        on[loc->stack * h.pseudo_channels + loc->pseudo_channel] += double(len);
        a += len;
    }
    return on;
}

void check(const std::string& platform, const std::vector<std::string>& sets, uint64_t seed) {
    HbmConfig h = test::load_platform(platform, sets).hbm;
    AddressMap map(h);
    flow::AddressSplit split(h, map);
    test::XorShift64 rng{seed};
    std::map<flow::SplitKey, std::vector<double>> by_key;
    int hits = 0;
    for (int i = 0; i < 1200; ++i) {
        const bool interleaved = i % 3 == 2 ? i % 2 : rng() % 2;
        const uint64_t base = interleaved ? map.interleaved_base() : map.stack_base(uint32_t(rng() % h.stacks));
        const uint64_t span = interleaved ? map.total_bytes() : h.stack_capacity;
        // A third of them repeat an earlier one's phase and size in another block (a key hit or a
        // rotation the key must tell apart), half of those whole aligned periods of either window.
        const uint64_t whole = uint64_t(h.interleave) * h.pseudo_channels * h.stacks * 4;
        const uint64_t bytes = i % 3 == 2 ? (i % 4 < 2 ? 32768 : whole) : 1 + rng() % (rng() % 4 ? 70000 : 3000000);
        uint64_t address = base + (rng() % 64 ? rng() % (64 << 20) : span - 1 - rng() % 100000) / 32 * 32;
        if (i % 3 == 2)
            address = base + (uint64_t(i) * 131 % 97) * uint64_t(h.interleave) * h.pseudo_channels * h.stacks * 4;
        if (address + bytes > base + span)
            continue;
        std::vector<double> got(size_t(h.stacks) * h.pseudo_channels, 0);
        uint64_t unmapped = 0;
        ASSERT_TRUE(split.split(address, bytes, got, unmapped));
        EXPECT_EQ(got, walk(h, map, address, bytes)) << platform << " 0x" << std::hex << address << " +" << std::dec << bytes;
        flow::SplitKey key;
        ASSERT_TRUE(split.key(address, bytes, key));
        auto [it, fresh] = by_key.try_emplace(key, got);
        if (!fresh) {
            ++hits;
            EXPECT_EQ(it->second, got) << "equal keys, different splits: 0x" << std::hex << address;
        }
    }
    EXPECT_GT(hits, 20) << "the test did not compare transfers of equal keys";
}

} // namespace

TEST(AddressSplit, EqualsAWalkOverEveryPieceWithFoldedPcs) {
    check("trn1", {}, 1);
    check("trn2", {}, 2);
}

TEST(AddressSplit, EqualsAWalkOverEveryPieceWithPlainPcs) {
    check("trn2", {"hbm.pc_hash=none"}, 3);
    check("tiny", {}, 4);
}

TEST(AddressSplit, RefusesAnUnmappedAddress) {
    HbmConfig h = test::load_platform("tiny").hbm;
    AddressMap map(h);
    flow::AddressSplit split(h, map);
    std::vector<double> on(size_t(h.stacks) * h.pseudo_channels, 0);
    uint64_t unmapped = 0;
    EXPECT_FALSE(split.split(map.total_bytes() - 64, 128, on, unmapped));
    EXPECT_EQ(unmapped, map.total_bytes());
    flow::SplitKey key;
    EXPECT_FALSE(split.key(map.total_bytes() + 4096, 64, key));
}
