// Output files that appear whole or not at all: written to a temporary beside the target and
// renamed over it when complete, so a run killed while writing leaves the previous file intact
// (and no empty or half-written one). A target that exists and is not a plain file (/dev/stdout,
// a FIFO, a symbolic link) is written in place: renaming over it would replace the link or device.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

namespace nctlm {

class AtomicFile {
public:
    explicit AtomicFile(const std::filesystem::path& path);
    ~AtomicFile();  // not committed: the temporary goes, the target is untouched
    AtomicFile(const AtomicFile&) = delete;
    AtomicFile& operator=(const AtomicFile&) = delete;

    std::ofstream& out() { return out_; }
    void commit();  // flushes and renames over the target; throws if anything failed

private:
    std::filesystem::path path_, tmp_;  // tmp_ empty: written in place
    std::ofstream out_;
    bool committed_ = false;
};

void write_atomically(const std::filesystem::path& path, const std::string& text);

// Throws std::runtime_error unless `path` could be written (its directory exists and is
// writable; the file, if it exists, is writable and not a directory), without touching it.
void check_writable(const std::filesystem::path& path);

} // namespace nctlm
