// Where the flow mode's pseudo-channel table (models/flow/flow_table.h) comes from, for an `hbm`
// section: a shipped table whose hash matches it (configs/flow/*.json, written by `nctlm calibrate
// flow`), else one cached earlier ($NCTLM_CACHE_DIR, else $XDG_CACHE_HOME/nctlm, else
// ~/.cache/nctlm: flow-<hash>.json), else one calibrated now (about 0.1 s) and cached.
#pragma once

#include "models/flow/flow_table.h"
#include "models/hbm/hbm_config.h"

#include <string>

namespace nctlm {

struct FlowTableFound {
    flow::FlowTable table;
    std::string origin;  // the file read, or "calibrated now (cached in FILE)"
};
FlowTableFound flow_table_for(const HbmConfig& hbm);
std::string flow_cache_dir();  // "" when there is no home to cache in

} // namespace nctlm
