// A tiny deterministic generator for randomised differential tests (xorshift64): the same
// sequence on every platform and standard library, unlike std::uniform_*_distribution.
#pragma once

#include <cstdint>

namespace nctlm::test {

struct XorShift64 {
    uint64_t state;  // not 0
    uint64_t operator()() {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        return state;
    }
};

} // namespace nctlm::test
