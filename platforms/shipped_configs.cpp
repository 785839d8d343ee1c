#include "platforms/shipped_configs.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

namespace fs = std::filesystem;

namespace nctlm {

std::vector<std::string> config_dirs() {
    std::vector<std::string> dirs;
    if (const char* env = std::getenv("NCTLM_DATA_DIR"))
        dirs.push_back(std::string(env) + "/configs");
    for (const char* d : {NCTLM_SOURCE_DIR "/configs", NCTLM_INSTALLED_DATA_DIR "/configs"}) {
        std::error_code ec;
        if (fs::is_directory(d, ec))
            dirs.push_back(d);
    }
    return dirs;
}

namespace {
// Kernel programs (docs/kernels.md), op graphs and models' Hugging Face configs (docs/models.md) are JSON;
// every other config is YAML.
std::string extension(const std::string& kind) {
    return kind == "kernels" || kind == "models" || kind == "graphs" ? ".json" : ".yaml";
}
} // namespace

std::string find_config(const std::string& name_or_path, const std::string& kind) {
    std::error_code ec;
    if (name_or_path.empty() || fs::exists(name_or_path, ec) || name_or_path.find('/') != std::string::npos)
        return name_or_path;
    std::string stem = name_or_path, ext = extension(kind);
    if (stem.size() > ext.size() && stem.compare(stem.size() - ext.size(), ext.size(), ext) == 0)
        stem.resize(stem.size() - ext.size());
    for (auto& d : config_dirs()) {
        fs::path p = fs::path(d) / kind / (stem + ext);
        if (fs::exists(p, ec))
            return p.string();
    }
    return name_or_path;
}

std::string python_package_dir() {
    std::vector<std::string> dirs;
    if (const char* env = std::getenv("NCTLM_DATA_DIR"))
        dirs.push_back(std::string(env) + "/python");
    dirs.push_back(NCTLM_SOURCE_DIR "/python");
    dirs.push_back(NCTLM_INSTALLED_DATA_DIR "/python");
    for (auto& d : dirs) {
        std::error_code ec;
        if (fs::is_directory(fs::path(d) / "nctlm", ec))
            return d;
    }
    return "";
}

std::vector<std::string> shipped_configs(const std::string& kind) {
    std::vector<std::string> names;
    for (auto& d : config_dirs()) {
        std::error_code ec;
        for (auto& e : fs::directory_iterator(fs::path(d) / kind, ec))
            if (e.path().extension() == extension(kind))
                names.push_back(e.path().stem().string());
    }
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    return names;
}

} // namespace nctlm
