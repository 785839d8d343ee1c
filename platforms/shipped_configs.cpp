#include "platforms/shipped_configs.h"

#include "models/common/config.h"

#include <algorithm>
#include <cstdlib>
#include <dlfcn.h>
#include <filesystem>

namespace fs = std::filesystem;

namespace nctlm {
namespace {

bool is_dir(const fs::path& p) {
    std::error_code ec;
    return fs::is_directory(p, ec);
}

// The components of a relative directory: "lib/x86_64-linux-gnu" -> {lib, x86_64-linux-gnu}.
std::vector<std::string> components(const fs::path& relative) {
    std::vector<std::string> out;
    for (auto& part : relative.lexically_normal())
        if (!part.empty() && part != ".")
            out.push_back(part.string());
    return out;
}

// The prefix whose `relative_dir` holds `binary` if that prefix has nctlm's installed data.
std::string install_prefix(const fs::path& binary, const fs::path& relative_dir) {
    std::error_code ec;
    fs::path dir = fs::canonical(binary, ec).parent_path();
    if (ec)
        return "";
    std::vector<std::string> want = components(relative_dir);
    for (size_t i = want.size(); i-- > 0;) {
        if (dir.filename() != want[i])
            return "";
        dir = dir.parent_path();
    }
    return is_dir(dir / NCTLM_INSTALL_DATADIR / "configs") ? dir.string() : "";
}

bool inside(const fs::path& file, const fs::path& dir) {
    std::error_code ec;
    fs::path f = fs::canonical(file, ec), d = fs::canonical(dir, ec);
    if (ec)
        return false;
    auto rel = f.lexically_relative(d);
    return !rel.empty() && *rel.begin() != "..";
}

// The executable, and the shared library holding this code when the libraries are shared.
std::vector<fs::path> own_binaries() {
    std::vector<fs::path> out;
    std::error_code ec;
    fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(&data_dirs), &info) && info.dli_fname && info.dli_fname[0] == '/') {
        fs::path lib = info.dli_fname;
        if (lib != exe)
            out.push_back(lib);
    }
    if (!ec)
        out.push_back(exe);
    return out;
}

DataDirs& package_dirs() {
    static DataDirs dirs{"", "", "", "none"};
    return dirs;
}

} // namespace

bool set_package_data_dirs(const std::string& share_dir, const std::string& python_dir) {
    package_dirs() = {share_dir + "/configs", share_dir + "/scripts", python_dir, "package " + share_dir};
    return true;
}

DataDirs data_dirs() {
    for (const fs::path& binary : own_binaries()) {
        for (const char* rel : {NCTLM_INSTALL_BINDIR, NCTLM_INSTALL_LIBDIR}) {
            std::string prefix = install_prefix(binary, rel);
            if (prefix.empty())
                continue;
            fs::path share = fs::path(prefix) / NCTLM_INSTALL_DATADIR;
            return {(share / "configs").string(), (share / "scripts").string(),
                    (fs::path(prefix) / NCTLM_INSTALL_PYTHONDIR).string(), "install " + prefix};
        }
    }
    for (const fs::path& binary : own_binaries())
        if (inside(binary, NCTLM_BINARY_DIR)) {
            fs::path src = NCTLM_SOURCE_DIR;
            if (is_dir(src / "configs"))
                return {(src / "configs").string(), (src / "scripts").string(), (src / "python").string(),
                        "build tree " + src.string()};
        }
    return package_dirs();
}

std::string find_script(const std::string& name) {
    std::vector<fs::path> dirs;
    if (const char* env = std::getenv("NCTLM_DATA_DIR"))
        dirs.push_back(fs::path(env) / "scripts");
    std::string own = data_dirs().scripts;
    if (!own.empty())
        dirs.push_back(own);
    std::error_code ec;
    for (auto& d : dirs)
        if (fs::is_regular_file(d / name, ec))
            return fs::canonical(d / name, ec).string();
    return "";
}

std::vector<std::string> config_dirs() {
    std::vector<std::string> dirs;
    if (const char* env = std::getenv("NCTLM_DATA_DIR"))
        dirs.push_back(std::string(env) + "/configs");
    std::string own = data_dirs().configs;
    if (!own.empty() && is_dir(own))
        dirs.push_back(own);
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

std::string resolve_config(const std::string& name_or_path, const std::string& kind) {
    std::string found = find_config(name_or_path, kind);
    std::error_code ec;
    if (found != name_or_path || fs::exists(found, ec) || name_or_path.find('/') != std::string::npos)
        return found;
    std::vector<std::string> names = shipped_configs(kind);
    std::string list;
    for (auto& n : names)
        list += (list.empty() ? "" : ", ") + n;
    std::string singular = kind.substr(0, kind.size() - 1);  // platforms -> platform
    std::string hint = did_you_mean(name_or_path, names);
    throw ConfigError(name_or_path + ": no such file, and no shipped " + singular + " of that name (" +
                      (names.empty() ? "none found: " + data_dirs().found_by + "; see `nctlm paths`"
                                     : "shipped: " + list) +
                      ")" + (hint.empty() ? "" : "; did you mean '" + hint + "'?"));
}

std::string python_package_dir() {
    std::vector<std::string> dirs;
    if (const char* env = std::getenv("NCTLM_DATA_DIR"))
        dirs.push_back(std::string(env) + "/python");
    dirs.push_back(data_dirs().python);
    for (auto& d : dirs) {
        std::error_code ec;
        if (!d.empty() && fs::is_directory(fs::path(d) / "nctlm", ec))
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
