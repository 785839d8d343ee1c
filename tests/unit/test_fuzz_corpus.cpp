// Replays every input in fuzz/corpus/<target> (seeds and every crash the fuzzer ever found)
// through the fuzz harnesses, built here without libFuzzer: a fixed crash stays fixed.
#include "fuzz/fuzz_target.h"
#include "platforms/platform_config.h"
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
NCTLM_FUZZ_TARGET(kernel);

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
TEST(FuzzCorpus, Kernel) { EXPECT_GT(replay("kernel", &nctlm_fuzz_kernel), 0u); }

// The dictionaries (scripts/fuzz passes them with -dict) steer the YAML and --set fuzzers to real
// keys; a key added to a field list and missing here would go unfuzzed past its name.
TEST(FuzzCorpus, DictionariesNameEveryPlatformKey) {
    auto read = [](const std::string& file) {
        std::ifstream in(nctlm::test::source_path(file));
        return std::string((std::istreambuf_iterator<char>(in)), {});
    };
    std::string config = read("fuzz/config.dict"), set = read("fuzz/set.dict");
    ASSERT_FALSE(config.empty());
    ASSERT_FALSE(set.empty());
    for (auto& f : nctlm::PlatformConfig::field_infos()) {
        EXPECT_NE(config.find("\"" + f.section + ":\""), std::string::npos) << "fuzz/config.dict lacks " << f.section;
        EXPECT_NE(config.find("\"" + f.key + ":\""), std::string::npos) << "fuzz/config.dict lacks " << f.key;
        EXPECT_NE(set.find("\"" + f.name() + "=\""), std::string::npos) << "fuzz/set.dict lacks " << f.name();
    }
}
