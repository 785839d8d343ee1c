#include "platforms/flow_tables.h"

#include "models/common/atomic_file.h"
#include "platforms/shipped_configs.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;

namespace nctlm {

namespace {
// The table in `path` if it is one for `hash`; a file that does not parse is passed over.
bool read_table(const fs::path& path, const std::string& hash, flow::FlowTable& out) {
    std::ifstream in(path);
    if (!in)
        return false;
    try {
        auto j = nlohmann::json::parse(in);
        if (j.value("hbm_hash", "") != hash)
            return false;
        out = flow::FlowTable::from_json(j);
        return true;
    } catch (const std::exception&) {
        return false;
    }
}
} // namespace

std::string flow_cache_dir() {
    if (const char* d = std::getenv("NCTLM_CACHE_DIR"); d && *d)
        return d;
    if (const char* d = std::getenv("XDG_CACHE_HOME"); d && *d)
        return std::string(d) + "/nctlm";
    if (const char* h = std::getenv("HOME"); h && *h)
        return std::string(h) + "/.cache/nctlm";
    return "";
}

FlowTableFound flow_table_for(const HbmConfig& hbm) {
    const std::string hash = flow::hbm_hash(hbm);
    FlowTableFound found;
    for (const auto& dir : config_dirs()) {
        std::error_code ec;
        for (const auto& e : fs::directory_iterator(fs::path(dir) / "flow", ec))
            if (e.path().extension() == ".json" && read_table(e.path(), hash, found.table)) {
                found.origin = e.path().string();
                return found;
            }
    }
    const std::string cache = flow_cache_dir();
    const fs::path cached = cache.empty() ? fs::path() : fs::path(cache) / ("flow-" + hash + ".json");
    if (!cache.empty() && read_table(cached, hash, found.table)) {
        found.origin = cached.string();
        return found;
    }
    found.table = flow::FlowTable::calibrate(hbm);
    found.origin = "calibrated now";
    if (!cache.empty()) {
        std::error_code ec;
        fs::create_directories(cache, ec);
        try {
            write_atomically(cached, found.table.to_json().dump(1) + "\n");
            found.origin += " (cached in " + cached.string() + ")";
        } catch (const std::exception&) {  // a cache we cannot write: calibrate again next time
        }
    }
    return found;
}

} // namespace nctlm
