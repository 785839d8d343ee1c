// --set parsing: each input line is one `--set` over the tiny platform; then the platform loads.
// Only ConfigError / UnitError may come out.
#include "fuzz/fuzz_target.h"
#include "models/common/config.h"
#include "platforms/platform_config.h"

#include <cstdint>
#include <sstream>
#include <string>

using namespace nctlm;

NCTLM_FUZZ_TARGET(set) {
    static const ConfigTree base = ConfigTree::from_file(NCTLM_SOURCE_DIR "/configs/platforms/tiny.yaml");
    std::string text(reinterpret_cast<const char*>(data), size);
    if (text.find('\0') != std::string::npos)
        return 0;
    ConfigTree tree = base;
    std::istringstream in(text);
    try {
        for (std::string line; std::getline(in, line);)
            tree.set(line);
        PlatformConfig::load(tree);
        tree.check_sections(PlatformConfig::sections());
        tree.effective_yaml();
    } catch (const ConfigError&) {
    } catch (const UnitError&) {
    }
    return 0;
}
