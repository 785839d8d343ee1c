// Running the Python tools of the nctlm package (the NKI tracer, the ONNX importer) from the CLI.
#pragma once

#include <string>
#include <vector>

namespace nctlm {

// Debian's python3 (with numpy and onnx from Debian) unless NCTLM_PYTHON names another.
std::string python_interpreter();
// Runs argv with `pythonpath` ahead of PYTHONPATH, waiting; returns its exit status (127: could not start).
int spawn(const std::vector<std::string>& argv, const std::string& pythonpath);

// A file a command writes: `path` when given, else a temporary file removed with this object.
struct OutputFile {
    std::string path;
    bool keep;
    OutputFile(const std::string& given, const std::string& prefix);
    ~OutputFile();
    OutputFile(const OutputFile&) = delete;
    OutputFile& operator=(const OutputFile&) = delete;
};

} // namespace nctlm
