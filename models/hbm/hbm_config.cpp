#include "models/hbm/hbm_config.h"

namespace nctlm {

const FieldList<HbmConfig>& HbmConfig::fields() {
    using C = HbmConfig;
    static const FieldList<C> f = {
        count("stacks", &C::stacks, nullptr, 1, 64, "HBM stacks on the chip (trn1: 2, trn2: 4; Neuron arch guide)"),
        bytes("stack_capacity", &C::stack_capacity, nullptr, 1 << 20, 1ull << 40,
              "capacity per stack (trn1: 32 GiB / 2 stacks)"),
        count("pseudo_channels", &C::pseudo_channels, nullptr, 1, 256,
              "pseudo-channels per stack (HBM2e: 8 channels x 2 PCs, JESD235)"),
        bandwidth("pc_bandwidth", &C::pc_bandwidth, nullptr,
                  "peak bandwidth of one pseudo-channel (64 bit x 3.2 Gb/s = 25.6 GB/s; x16 = 410 GB/s/stack)"),
        bytes("interleave", &C::interleave, "2 KiB", 64, 1 << 30, "address interleave granularity across PCs"),
        bytes("stack_interleave", &C::stack_interleave, "4 KiB", 64, 1 << 30,
              "granularity across stacks inside the interleaved window"),
        bytes("interleaved_base", &C::interleaved_base, "1 TiB", 0, 1ull << 50,
              "base of the stack-interleaved alias window (same memory, spread over all stacks)"),
        duration("controller_latency", &C::controller_latency, nullptr,
                 "arrival to first data: controller front end + tRCD + RL (HBM2 JEDEC: 12 + 17 tCK at 1 GHz)"),
        flag("functional", &C::functional, "false", "store data in sparse pages (read-back checks)"),
    };
    return f;
}

} // namespace nctlm
