// Shipped configs by name: `-p trn1` is configs/platforms/trn1.yaml, `-w gemm_32x3072x32` a
// workload, found in $NCTLM_DATA_DIR, the source tree this was built from, or the install prefix.
#pragma once

#include <string>
#include <vector>

namespace nctlm {

// Directories searched for configs/<kind>/<name>.yaml, in order.
std::vector<std::string> config_dirs();
// `name_or_path` itself if it exists or names a path; else the shipped <kind>/<name>.yaml
// (kind: "platforms", "workloads", "sweeps"); else `name_or_path` unchanged (the loader then
// reports it missing).
std::string find_config(const std::string& name_or_path, const std::string& kind);
// Names (file stems) of the shipped configs of one kind, sorted.
std::vector<std::string> shipped_configs(const std::string& kind);
// The directory holding the nctlm Python package (its parent: PYTHONPATH), searched like the
// configs ($NCTLM_DATA_DIR/python, the source tree's python/, the install prefix's); "" if none.
std::string python_package_dir();

} // namespace nctlm
