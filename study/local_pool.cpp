#include "study/local_pool.h"

#include "study/exit_status.h"
#include "models/common/atomic_file.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <iostream>
#include <map>
#include <optional>
#include <poll.h>
#include <sstream>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;
using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

namespace nctlm::sweep {
namespace {

volatile std::sig_atomic_t g_stop = 0;
void on_signal(int sig) { g_stop = sig; }

// The last few lines a failing point wrote to stderr, joined for one CSV cell.
std::string stderr_tail(const fs::path& log, size_t lines = 5) {
    std::string text = read_text(log);
    if (text.size() > 8192)
        text = text.substr(text.size() - 8192);
    std::vector<std::string> all;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        if (!line.empty() && line.back() == '\r')
            line.pop_back();
        auto cr = line.rfind('\r');  // progress lines overwrite themselves
        if (cr != std::string::npos)
            line = line.substr(cr + 1);
        if (!line.empty())
            all.push_back(line);
    }
    std::string out;
    for (size_t i = all.size() > lines ? all.size() - lines : 0; i < all.size(); ++i)
        out += (out.empty() ? "" : " | ") + all[i];
    return out;
}

pid_t start_process(const std::vector<std::string>& argv) {
    pid_t pid = fork();
    if (pid == 0) {
        std::vector<char*> cargv;
        for (auto& a : argv)
            cargv.push_back(const_cast<char*>(a.c_str()));
        cargv.push_back(nullptr);
        execv(cargv[0], cargv.data());
        std::perror(argv[0].c_str());
        _exit(127);
    }
    return pid;
}

} // namespace

void catch_stop_signals() {
    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);
}
bool stop_requested() { return g_stop != 0; }

std::string self_exe() {
    std::error_code ec;
    fs::path p = fs::read_symlink("/proc/self/exe", ec);
    if (ec)
        throw std::runtime_error("cannot resolve /proc/self/exe: " + ec.message());
    return p.string();
}

std::string hms(double s) {
    long t = long(s + 0.5);
    return t >= 3600 ? fmt::format("{}:{:02}:{:02}", t / 3600, t / 60 % 60, t % 60)
                     : fmt::format("{}:{:02}", t / 60, t % 60);
}

std::vector<int> run_all(const std::vector<std::vector<std::string>>& commands, size_t workers) {
    std::vector<int> rcs(commands.size(), -1);
    std::map<pid_t, size_t> running;
    size_t next = 0;
    while (next < commands.size() || !running.empty()) {
        while (running.size() < std::max<size_t>(1, workers) && next < commands.size()) {
            pid_t pid = start_process(commands[next]);
            if (pid > 0)
                running[pid] = next;
            ++next;
        }
        if (running.empty())
            continue;
        // Only called when no sweep point is running: any child that exits is one of ours.
        int status = 0;
        pid_t pid = waitpid(-1, &status, 0);
        if (pid < 0) {
            if (errno == EINTR)
                continue;
            break;  // ECHILD: nothing left to wait for
        }
        if (!running.count(pid))
            continue;
        rcs[running[pid]] = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        running.erase(pid);
    }
    return rcs;
}

// ---- progress ---------------------------------------------------------------------------------

Progress::Progress(size_t total, size_t skipped) : total_(total), done_(skipped), skipped_(skipped), tty_(isatty(2)) {}

void Progress::finished(const ojson& row, double seconds) {
    ++done_;
    failed_ += row["status"] != "ok";
    if (tty_) {
        draw();
        return;
    }
    std::string axes;
    for (auto& [k, v] : row["axes"].items())
        axes += (axes.empty() ? "" : " ") + k + "=" + v.get<std::string>();
    std::cerr << fmt::format("[{}/{}] {} {:<8} {:6.2f} s  {}{}\n", done_, total_, row["id"].get<std::string>(),
                             row["status"].get<std::string>(), seconds, axes,
                             row["status"] == "ok" ? "" : "  " + row["error"].get<std::string>());
}

void Progress::tick(size_t running) {
    running_ = running;
    if (tty_ && Clock::now() - last_ > std::chrono::milliseconds(200))
        draw();
}

void Progress::end() {
    running_ = 0;
    if (tty_) {
        draw();
        std::cerr << "\n";
    }
}

void Progress::draw() {
    last_ = Clock::now();
    double elapsed = std::chrono::duration<double>(last_ - start_).count();
    size_t ran = done_ - skipped_;
    std::string eta = ran ? hms(elapsed / double(ran) * double(total_ - done_)) : "?";
    const int width = 30;
    int fill = total_ ? int(width * done_ / total_) : width;
    std::cerr << fmt::format("\r[{}{}] {}/{} done, {} failed, {} running, {} elapsed, ETA {}\x1b[K",
                             std::string(fill, '#'), std::string(width - fill, '.'), done_, total_, failed_,
                             running_, hms(elapsed), eta)
              << std::flush;
}

// ---- the local pool -----------------------------------------------------------------------------

namespace {

struct Child {
    pid_t pid;
    const Job* job;
    Clock::time_point start;
    bool timed_out = false;
    int pidfd = -1;  // readable when the child exits: the pool sleeps in poll() until one does
};

// A file descriptor that becomes readable when `pid` exits (Linux >= 5.3), or -1.
int pidfd_for(pid_t pid) {
#ifdef SYS_pidfd_open
    return int(syscall(SYS_pidfd_open, pid, 0));
#else
    (void)pid;
    return -1;
#endif
}

pid_t spawn(const Spec& spec, const Job& j, const OutDir& out) {
    fs::path stats = out.point_file(j.point.id, ".json"), log = out.point_file(j.point.id, ".log");
    std::error_code ec;
    fs::remove(stats, ec);
    std::vector<std::string> argv = run_argv(spec, j, stats.string());
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0)
        throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
    if (pid == 0) {
        // Own process group (a timeout kills the point and anything it started); dies with us.
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(127);
        int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int null = open("/dev/null", O_RDWR);
        if (fd >= 0)
            dup2(fd, 2);
        if (null >= 0) {
            dup2(null, 0);
            dup2(null, 1);
        }
        std::vector<char*> cargv;
        for (auto& a : argv)
            cargv.push_back(const_cast<char*>(a.c_str()));
        cargv.push_back(nullptr);
        // /proc/self/exe: the very binary this sweep runs, even if it was rebuilt meanwhile.
        execv("/proc/self/exe", cargv.data());
        std::perror("exec /proc/self/exe");
        _exit(127);
    }
    setpgid(pid, pid);
    return pid;
}

ojson finish(const Child& c, int status, const OutDir& out) {
    const Job& j = *c.job;
    ojson r = base_row(j);
    r["point_host_time_s"] = std::chrono::duration<double>(Clock::now() - c.start).count();
    fs::path stats = out.point_file(j.point.id, ".json"), log = out.point_file(j.point.id, ".log");
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r["exit_code"] = code;
    std::optional<json> report;
    try {
        std::error_code ec;
        if (fs::exists(stats, ec))
            report = json::parse(read_text(stats));
    } catch (const std::exception&) {
    }
    if (report) {
        if (report->contains("results"))
            r["results"] = flatten((*report)["results"]);
        if (report->contains("sim")) {
            const json& sim = (*report)["sim"];
            r["sim_time_ns"] = sim.contains("sim_time_ns") ? sim["sim_time_ns"] : sim.value("simulated_ns", json());
            r["host_time_s"] = sim.contains("host_time_s") ? sim["host_time_s"] : sim.value("wall_s", json());
        }
    }
    if (c.timed_out) {
        r["status"] = "timeout";
        r["error"] = fmt::format("killed after the {:.0f} s timeout", r["point_host_time_s"].get<double>());
    } else if (WIFSIGNALED(status)) {
        r["status"] = "crashed";
        r["error"] = fmt::format("signal {} ({}){}", WTERMSIG(status), strsignal(WTERMSIG(status)),
                                 [&] {
                                     std::string t = stderr_tail(log);
                                     return t.empty() ? std::string() : ": " + t;
                                 }());
    } else if (code != 0) {
        r["status"] = "failed";
        r["error"] = stderr_tail(log);
    } else if (!report) {
        r["status"] = "failed";
        r["error"] = "exit 0 but no readable stats JSON; " + stderr_tail(log);
    } else {
        r["status"] = "ok";
    }
    return r;
}

} // namespace

bool run_local(const Spec& spec, const std::vector<const Job*>& todo, size_t workers, double timeout_s,
               const OutDir& out, Progress& progress, const std::function<void(const ojson&)>& on_row) {
    std::vector<Child> running;
    size_t next = 0;
    auto kill_all = [&] {
        for (auto& c : running)
            kill(-c.pid, SIGKILL);
        for (auto& c : running) {
            waitpid(c.pid, nullptr, 0);
            if (c.pidfd >= 0)
                close(c.pidfd);
        }
        running.clear();
    };
    while (next < todo.size() || !running.empty()) {
        if (g_stop) {
            kill_all();
            return false;
        }
        while (running.size() < workers && next < todo.size()) {
            const Job* j = todo[next++];
            if (!j->error.empty()) {
                ojson r = base_row(*j);
                r["status"] = "invalid";
                r["exit_code"] = kExitUsage;
                r["error"] = j->error;
                write_atomically(out.row(j->point.id), r.dump() + "\n");
                on_row(r);
                progress.finished(r, 0);
                continue;
            }
            pid_t pid = spawn(spec, *j, out);
            running.push_back({pid, j, Clock::now(), false, pidfd_for(pid)});
        }
        // Reap whatever has finished; if nothing has, sleep until a child exits (its pidfd turns
        // readable), the next timeout falls due, the progress bar needs a redraw, or a signal.
        int status = 0;
        bool reaped = false;
        for (pid_t pid; (pid = waitpid(-1, &status, WNOHANG)) > 0;) {
            auto it = std::find_if(running.begin(), running.end(), [&](const Child& c) { return c.pid == pid; });
            if (it == running.end())
                continue;
            Child c = *it;
            running.erase(it);
            if (c.pidfd >= 0)
                close(c.pidfd);
            ojson r = finish(c, status, out);
            write_atomically(out.row(c.job->point.id), r.dump() + "\n");
            on_row(r);
            progress.finished(r, r["point_host_time_s"].get<double>());
            reaped = true;
        }
        auto now = Clock::now();
        double wait_s = progress.redraw_every_s();
        for (auto& c : running) {
            double left = timeout_s - std::chrono::duration<double>(now - c.start).count();
            if (!c.timed_out && left <= 0) {
                c.timed_out = true;
                kill(-c.pid, SIGKILL);
            } else if (!c.timed_out) {
                wait_s = std::min(wait_s, left);
            }
        }
        progress.tick(running.size());
        if (reaped || running.empty() || g_stop)
            continue;
        std::vector<pollfd> fds;
        for (auto& c : running)
            if (c.pidfd >= 0)
                fds.push_back({c.pidfd, POLLIN, 0});
        if (fds.size() < running.size())
            wait_s = std::min(wait_s, 0.01);  // no pidfd for some child (old kernel): poll its exit
        poll(fds.data(), fds.size(), std::max(1, int(std::ceil(wait_s * 1000))));  // EINTR on a signal
    }
    return true;
}

} // namespace nctlm::sweep
