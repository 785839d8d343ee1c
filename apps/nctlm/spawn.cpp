#include "apps/nctlm/spawn.h"

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <sys/wait.h>
#include <unistd.h>

namespace nctlm {

std::string python_interpreter() {
    if (const char* p = std::getenv("NCTLM_PYTHON"))
        return p;
    std::error_code ec;
    return std::filesystem::exists("/usr/bin/python3", ec) ? "/usr/bin/python3" : "python3";
}

// Runs argv, waiting; returns its exit status (127: could not start).
int spawn(const std::vector<std::string>& argv, const std::string& pythonpath) {
    pid_t pid = fork();
    if (pid < 0)
        throw std::runtime_error("fork failed");
    if (pid == 0) {
        std::string path = pythonpath;
        if (const char* old = std::getenv("PYTHONPATH"))
            path += std::string(":") + old;
        setenv("PYTHONPATH", path.c_str(), 1);
        std::vector<char*> args;
        for (auto& a : argv)
            args.push_back(const_cast<char*>(a.c_str()));
        args.push_back(nullptr);
        execvp(args[0], args.data());
        _exit(127);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            throw std::runtime_error("waitpid failed");
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}


OutputFile::OutputFile(const std::string& given, const std::string& prefix) : path(given), keep(!given.empty()) {
    if (keep)
        return;
    std::string name = "/tmp/" + prefix + "-XXXXXX";
    int fd = mkstemp(name.data());
    if (fd < 0)
        throw std::runtime_error("cannot create a temporary file in /tmp");
    close(fd);
    path = name;
}

OutputFile::~OutputFile() {
    std::error_code ec;
    if (!keep)
        std::filesystem::remove(path, ec);
}

} // namespace nctlm
