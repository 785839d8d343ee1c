// The config loader: the input is a YAML file merged over the tiny platform (as a workload file
// would be), then every platform section loads. Only ConfigError / UnitError may come out.
#include "fuzz/fuzz_target.h"
#include "models/common/config.h"
#include "platforms/platform_config.h"

#include <cstdint>
#include <sstream>
#include <string>

using namespace nctlm;

NCTLM_FUZZ_TARGET(config) {
    static const ConfigTree base = ConfigTree::from_file(NCTLM_SOURCE_DIR "/configs/platforms/tiny.yaml");
    std::string text(reinterpret_cast<const char*>(data), size);
    // Alone (as a platform file) and merged over tiny (as a workload file).
    for (int merged = 0; merged < 2; ++merged) {
        try {
            std::istringstream in(text);
            YAML::Node doc = load_yaml_stream(in, "fuzz.yaml");
            ConfigTree tree = merged ? base : ConfigTree();
            tree.merge_document(doc, "fuzz.yaml");
            PlatformConfig::load(tree);
            tree.check_sections(PlatformConfig::sections());
            tree.effective_yaml();
        } catch (const ConfigError&) {
        } catch (const UnitError&) {
        }
    }
    return 0;
}
