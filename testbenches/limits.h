// Checks of testbench keys against the platform they run on, made in configure() so that
// `nctlm validate`, `sweep --dry-run` and the sweep's own point check see them, not only a run.
#pragma once

#include "models/common/config.h"
#include "platforms/platform_config.h"

#include <fmt/format.h>

namespace nctlm {

inline void check_tile(const ConfigTree& tree, const PlatformConfig& pc, uint32_t tile) {
    if (tile >= pc.platform.tiles)
        throw ConfigError(fmt::format("{}: testbench.tile={} but the platform has {} tiles (0..{})",
                                      tree.where("testbench", "tile"), tile, pc.platform.tiles,
                                      pc.platform.tiles - 1));
}

// Every byte a testbench touches in one stack must lie inside it: past the end the address map
// answers with the next stack, and the report would name the wrong one.
inline void check_in_stack(const ConfigTree& tree, const PlatformConfig& pc, const char* key, uint64_t end,
                           const std::string& what) {
    if (end > pc.hbm.stack_capacity)
        throw ConfigError(fmt::format("{}: {} ends at {} B, beyond the stack's hbm.stack_capacity ({})",
                                      tree.where("testbench", key), what, end,
                                      format_bytes(pc.hbm.stack_capacity)));
}

} // namespace nctlm
