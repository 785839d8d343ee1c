#include "models/hbm/hbm_config.h"

namespace nctlm {

const FieldList<HbmConfig>& HbmConfig::fields() {
    using C = HbmConfig;
    static const FieldList<C> f = {
        count("stacks", &C::stacks, nullptr, 1, 64, "HBM stacks on the chip (trn1: 2, trn2: 4; Neuron arch guide)")
            .documented("Neuron arch guide"),
        bytes("stack_capacity", &C::stack_capacity, nullptr, 1 << 20, 1ull << 40,
              "capacity per stack (trn1: 32 GiB / 2 stacks)")
            .documented("Neuron arch guide"),
        count("pseudo_channels", &C::pseudo_channels, nullptr, 1, 256,
              "pseudo-channels per stack (HBM2e: 8 channels x 2 PCs, JESD235)")
            .documented("JESD235 / JESD238"),
        bandwidth("pc_bandwidth", &C::pc_bandwidth, nullptr,
                  "peak bandwidth of one pseudo-channel (64 bit x 3.2 Gb/s = 25.6 GB/s; x16 = 410 GB/s/stack)")
            .documented("JESD235 pin rate; Neuron arch guide chip total"),
        bytes("interleave", &C::interleave, "2 KiB", 64, 1 << 30, "address interleave granularity across PCs")
            .assumed("1 KiB..4 KiB", "one DMA burst per PC"),
        bytes("stack_interleave", &C::stack_interleave, "4 KiB", 64, 1 << 30,
              "granularity across stacks inside the interleaved window")
            .assumed("2 KiB..8 KiB", "address-map choice"),
        bytes("interleaved_base", &C::interleaved_base, "1 TiB", 0, 1ull << 50,
              "base of the stack-interleaved alias window (same memory, spread over all stacks)")
            .setting("address-map alias, not hardware"),
        duration("controller_latency", &C::controller_latency, nullptr,
                 "arrival to first data: controller front end + tRCD + RL (HBM2 JEDEC: 12 + 17 tCK at 1 GHz)")
            .documented("JEDEC HBM2/HBM3 tRCD + RL"),
        flag("functional", &C::functional, "false", "store data in sparse pages (read-back checks)")
            .setting("simulator switch"),
    };
    return f;
}

} // namespace nctlm
