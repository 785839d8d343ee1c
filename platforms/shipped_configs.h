// Where nctlm's data lives, for the CLI, the sweep, the studies and any program built on the
// library: the shipped configs (`-p trn1`, `-w gemm_32x3072x32`), the scripts it runs (plot,
// tornado, interval) and the `nctlm` Python package (which `nctlm kernel` and users import).
//
// Looked up, in order (the first that has the data wins; NCTLM_DATA_DIR only adds configs):
//   1. $NCTLM_DATA_DIR: a directory laid out like share/nctlm (configs/, scripts/, python/);
//   2. an install: the prefix the running executable (or the shared library holding this code)
//      was installed to, found from its own location: <prefix>/bin/nctlm -> <prefix>/share/nctlm
//      and <prefix>/lib/python3/dist-packages. Any prefix: the tree can be copied or moved;
//   3. the build tree: a binary inside the build directory reads the source tree it was built
//      from (configs/, scripts/, python/ of the checkout);
//   4. a program of your own built against an installed nctlm (find_package) is told its
//      package's directory by the package (cmake/nctlm_package_data.cpp.in).
// An installed binary never reads a checkout; a binary outside both finds nothing (and says so).
#pragma once

#include <string>
#include <vector>

namespace nctlm {

struct DataDirs {
    std::string configs;   // holds platforms/, workloads/, sweeps/; "" if none was found
    std::string scripts;   // plot, tornado, interval; ""
    std::string python;    // the directory holding the `nctlm` package (what PYTHONPATH needs); ""
    std::string found_by;  // how: "install <prefix>", "build tree <source dir>", "package <dir>", "none"
};
// The installed (or build-tree) data of this binary; NCTLM_DATA_DIR aside.
DataDirs data_dirs();

// scripts/NAME from data_dirs() (or $NCTLM_DATA_DIR/scripts), or "" if there is none.
std::string find_script(const std::string& name);

// For programs built against an installed package: where that package's share/nctlm and Python
// directory are (called by the source the CMake package adds to nctlm::nctlm; not needed by the
// nctlm CLI, which finds its own prefix).
bool set_package_data_dirs(const std::string& share_dir, const std::string& python_dir);

// Directories searched for configs/<kind>/<name>.yaml, in order.
std::vector<std::string> config_dirs();
// `name_or_path` itself if it exists or names a path; else the shipped <kind>/<name>.yaml
// (kind: "platforms", "workloads", "sweeps"); else `name_or_path` unchanged (the loader then
// reports it missing).
std::string find_config(const std::string& name_or_path, const std::string& kind);
// find_config, but a bare name that is neither a file nor a shipped config is a ConfigError that
// lists the shipped names of that kind with a did-you-mean ("trn3: no such file, and no shipped
// platform of that name (shipped: tiny, trn1, trn2); did you mean 'trn1'?").
std::string resolve_config(const std::string& name_or_path, const std::string& kind);
// Names (file stems) of the shipped configs of one kind, sorted.
std::vector<std::string> shipped_configs(const std::string& kind);
// The directory holding the nctlm Python package (what PYTHONPATH needs: `nctlm kernel` runs
// nctlm.nki from it): $NCTLM_DATA_DIR/python if it has the package, else data_dirs().python (the
// install's lib/python3/dist-packages, or the checkout's python/ for a build-tree binary); "" if
// neither has it.
std::string python_package_dir();

} // namespace nctlm
