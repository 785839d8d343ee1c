// `nctlm calibrate flow -p PLATFORM [--set hbm.KEY=VALUE]... [-o FILE]`: the flow mode's table of one
// HBM pseudo-channel (models/flow/flow_table.h), measured on the banked model; shipped for trn1 and
// trn2 in configs/flow/, cached for any other hbm section (platforms/flow_tables.h).
#pragma once

#include <string>
#include <vector>

namespace nctlm {

int cmd_calibrate(const std::vector<std::string>& args);

} // namespace nctlm
