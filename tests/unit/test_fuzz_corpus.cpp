// Replays every input in fuzz/corpus/<target> (seeds and every crash the fuzzer ever found)
// through the fuzz harnesses, built here without libFuzzer: a fixed crash stays fixed.
#include "fuzz/fuzz_target.h"
#include "tests/support.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <iterator>
#include <string>

NCTLM_FUZZ_TARGET(units);
NCTLM_FUZZ_TARGET(set);
NCTLM_FUZZ_TARGET(config);
NCTLM_FUZZ_TARGET(sweep_spec);

namespace {
size_t replay(const std::string& target, int (*fn)(const uint8_t*, size_t)) {
    size_t n = 0;
    for (auto& e : std::filesystem::directory_iterator(nctlm::test::source_path("fuzz/corpus/" + target))) {
        std::ifstream in(e.path(), std::ios::binary);
        std::string bytes((std::istreambuf_iterator<char>(in)), {});
        SCOPED_TRACE(e.path().string());
        fn(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());  // aborts on a bug
        ++n;
    }
    return n;
}
} // namespace

TEST(FuzzCorpus, Units) { EXPECT_GT(replay("units", &nctlm_fuzz_units), 0u); }
TEST(FuzzCorpus, Set) { EXPECT_GT(replay("set", &nctlm_fuzz_set), 0u); }
TEST(FuzzCorpus, Config) { EXPECT_GT(replay("config", &nctlm_fuzz_config), 0u); }
TEST(FuzzCorpus, SweepSpec) { EXPECT_GT(replay("sweep_spec", &nctlm_fuzz_sweep_spec), 0u); }
