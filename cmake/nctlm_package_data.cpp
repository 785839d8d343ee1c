// Added by the nctlm CMake package (find_package(nctlm)) to every program that links nctlm::nctlm:
// tells the library where that package's data is (shipped configs such as `-p trn1`, the plot
// scripts, the Python package), since a program of your own is not installed beside it.
// See platforms/shipped_configs.h for the order of the lookup.
#include "platforms/shipped_configs.h"

namespace {
const bool nctlm_package_data_known = nctlm::set_package_data_dirs(NCTLM_PACKAGE_DATA_DIR, NCTLM_PACKAGE_PYTHON_DIR);
} // namespace
