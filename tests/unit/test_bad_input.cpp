// Bad input that used to be accepted or answered wrongly (issue 12), one test per reproducer,
// named after the input. Each asserts the error and the location it names.
#include "models/common/config.h"
#include "platforms/platform_config.h"
#include "tests/support.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace nctlm;

namespace {

std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const ConfigError& e) {
        return e.what();
    } catch (const UnitError& e) {
        return e.what();
    }
    return "";
}

std::string load_error(const std::vector<std::string>& files, const std::vector<std::string>& sets = {}) {
    return error_of([&] {
        ConfigTree t = ConfigTree::from_file(files[0]);
        for (size_t i = 1; i < files.size(); ++i)
            t.merge_file(files[i]);
        for (auto& s : sets)
            t.set(s);
        PlatformConfig::load(t);
    });
}

std::string trn1_text() {
    std::ifstream in(test::platform("trn1"));
    return std::string((std::istreambuf_iterator<char>(in)), {});
}

#define EXPECT_HAS(text, part) EXPECT_NE((text).find(part), std::string::npos) << (text)

} // namespace

// ---- quantities --------------------------------------------------------------------------------

TEST(BadInput, Bytes1e20BIsTooLargeNotZero) {
    EXPECT_HAS(error_of([] { parse_bytes("1e20 B"); }), "too large");
    EXPECT_HAS(error_of([] { parse_bytes("2e19 B"); }), "too large");
    EXPECT_HAS(error_of([] { parse_bytes("16 EiB"); }), "unknown unit");
    EXPECT_HAS(error_of([] { parse_bytes("20000000 TB"); }), "too large");
    EXPECT_EQ(parse_bytes("1.5e19 B"), 15000000000000000000ull);  // below 2^64: exact
}

TEST(BadInput, Number1e400IsNotFinite) {
    EXPECT_HAS(error_of([] { parse_bytes("1e400 B"); }), "not a finite number");
    EXPECT_HAS(error_of([] { parse_duration("1e400 ns"); }), "not a finite number");
    EXPECT_HAS(error_of([] { parse_bandwidth("1e400 GB/s"); }), "not a finite number");
    // 1e300 fits a double but not once scaled by the unit.
    EXPECT_HAS(error_of([] { parse_duration("1e300 s"); }), "too large");
    EXPECT_HAS(error_of([] { detail::parse_real("1e400"); }), "not a number");
}

TEST(BadInput, Count2Pow64DoesNotClamp) {
    EXPECT_HAS(error_of([] { detail::parse_count("18446744073709551616"); }), "too large");
    EXPECT_EQ(detail::parse_count("18446744073709551615"), 18446744073709551615ull);
}

// ---- YAML files --------------------------------------------------------------------------------

TEST(BadInput, DuplicateKeyInPlatformFile) {
    std::string text = trn1_text();
    text.replace(text.find("  channels: 16"), 0, "  channels: 2\n");
    std::string f = test::temp_file(text);
    std::string msg = load_error({f});
    EXPECT_HAS(msg, "duplicate key 'channels' (first at line");
    EXPECT_HAS(msg, f + ":");
}

TEST(BadInput, DuplicateKeyInWorkloadFile) {
    std::string w = test::temp_file("workload:\n  n: 512\n  n: 1024\n");
    EXPECT_HAS(load_error({test::platform("trn1"), w}), w + ":3:3: duplicate key 'n' (first at line 2)");
}

TEST(BadInput, DuplicateSectionInFile) {
    std::string w = test::temp_file("dma:\n  channels: 4\ndma:\n  queues: 4\n");
    EXPECT_HAS(load_error({test::platform("trn1"), w}), w + ":3:1: duplicate key 'dma'");
}

TEST(BadInput, SecondYamlDocumentIsAnError) {
    std::string w = test::temp_file("dma:\n  channels: 4\n---\ndma:\n  channels: 8\n");
    std::string msg = load_error({test::platform("trn1"), w});
    EXPECT_HAS(msg, w + ":3:1:");  // the '---' that starts it
    EXPECT_HAS(msg, "second YAML document");
}

TEST(BadInput, ComplexKeyIsAnErrorWithLocation) {
    std::string w = test::temp_file("dma:\n  ? [a, b]\n  : 4\n");
    std::string msg = load_error({test::platform("trn1"), w});
    EXPECT_HAS(msg, w + ":2:");
    EXPECT_HAS(msg, "a key must be a plain word, not a list");
}

TEST(BadInput, DirectoryAsConfig) {
    std::string dir = std::filesystem::temp_directory_path() / ("nctlm_dir_" + std::to_string(getpid()));
    std::filesystem::create_directories(dir);
    EXPECT_HAS(load_error({dir}), dir + ": is a directory");
    std::filesystem::remove(dir);
}

TEST(BadInput, FifoAsConfigDoesNotBlock) {
    std::string fifo = std::filesystem::temp_directory_path() / ("nctlm_fifo_" + std::to_string(getpid()));
    ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
    EXPECT_HAS(load_error({fifo}), fifo + ": is not a regular file");
    std::filesystem::remove(fifo);
}

TEST(BadInput, WorkloadKeyOverridingPlatformSectionNamesTheWorkloadFile) {
    // hbm.controller_latency exists in trn1.yaml; the workload's bad value must be reported at
    // the workload's line, not at the platform's.
    std::string w = test::temp_file("# a comment\nhbm:\n  controller_latency: 29 GHz\n");
    EXPECT_HAS(load_error({test::platform("trn1"), w}), w + ":3:3: key 'hbm.controller_latency'");
}

TEST(BadInput, MissingSectionNamesThePlatformFileNotDefaults) {
    std::string text = trn1_text();
    size_t at = text.find("\nnoc:"), end = text.find("\nhbm:");
    ASSERT_NE(at, std::string::npos);
    text.erase(at, end - at);
    std::string f = test::temp_file(text);
    std::string msg = load_error({f});
    EXPECT_EQ(msg.find("<defaults>"), std::string::npos) << msg;
    EXPECT_HAS(msg, f + ": missing key 'noc.");
}

TEST(BadInput, SetWithSpacesAroundEqualsIsTrimmed) {
    ConfigTree t = ConfigTree::from_file(test::platform("trn1"));
    t.set(" dma.channels = 4 ");
    t.set("hbm.controller_latency =  30 ns");
    PlatformConfig c = PlatformConfig::load(t);
    EXPECT_EQ(c.dma.channels, 4u);
    EXPECT_DOUBLE_EQ(c.hbm.controller_latency.ns, 30);
    EXPECT_HAS(error_of([&] { t.set(" .channels=4"); }), "expected section.key=value");
}

// Found by fuzz_config / fuzz_sweep_spec: yaml-cpp's LoadAll never returned on a stray ','.
TEST(BadInput, StrayCommaYamlDoesNotHang) {
    for (const char* text : {",", ", 3\n"}) {
        std::string f = test::temp_file(text);
        std::string msg = load_error({f});
        EXPECT_HAS(msg, f + ":");
    }
}
