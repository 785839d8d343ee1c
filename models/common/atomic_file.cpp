#include "models/common/atomic_file.h"

#include <stdexcept>
#include <system_error>
#include <unistd.h>

namespace nctlm {

namespace fs = std::filesystem;

AtomicFile::AtomicFile(const fs::path& path) : path_(path) {
    std::error_code ec;
    fs::file_status s = fs::symlink_status(path, ec);
    if (ec || !fs::exists(s) || fs::is_regular_file(s)) {
        tmp_ = path;
        tmp_ += ".tmp." + std::to_string(getpid());
    }
    out_.open(tmp_.empty() ? path_ : tmp_, std::ios::binary);
    if (!out_)
        throw std::runtime_error("cannot write " + (tmp_.empty() ? path_ : tmp_).string());
}

AtomicFile::~AtomicFile() {
    if (!committed_ && !tmp_.empty()) {
        out_.close();
        std::error_code ec;
        fs::remove(tmp_, ec);
    }
}

void AtomicFile::commit() {
    out_.flush();
    if (!out_)
        throw std::runtime_error("cannot write " + (tmp_.empty() ? path_ : tmp_).string());
    out_.close();
    committed_ = tmp_.empty();
    if (committed_)
        return;
    std::error_code ec;
    fs::rename(tmp_, path_, ec);
    if (ec)
        throw std::runtime_error("cannot write " + path_.string() + ": " + ec.message());
    committed_ = true;
}

void write_atomically(const fs::path& path, const std::string& text) {
    AtomicFile f(path);
    f.out() << text;
    f.commit();
}

void check_writable(const fs::path& path) {
    std::error_code ec;  // a name too long or an unreadable directory: cannot write, said as such
    if (fs::is_directory(path, ec))
        throw std::runtime_error("is a directory; give a file name");
    fs::path dir = path.parent_path();
    if (dir.empty())
        dir = ".";
    bool exists = fs::exists(path, ec);
    if (ec || !fs::is_directory(dir, ec) || access(dir.c_str(), W_OK) != 0 ||
        (exists && access(path.c_str(), W_OK) != 0))
        throw std::runtime_error("cannot write (missing directory, no permission or name too long)");
}

} // namespace nctlm
