// NCTLM_FUZZ_TARGET(name) { ... uses data, size ... }: the libFuzzer entry point in a fuzz build;
// elsewhere a plain function nctlm_fuzz_<name>, so tests/unit/test_fuzz_corpus.cpp replays every
// corpus file (each crash the fuzzer ever found) through the same code in the normal test suite.
#pragma once

#include <cstddef>
#include <cstdint>

#ifdef NCTLM_LIBFUZZER
#define NCTLM_FUZZ_TARGET(name) extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
#else
#define NCTLM_FUZZ_TARGET(name) int nctlm_fuzz_##name(const uint8_t* data, size_t size)
#endif
