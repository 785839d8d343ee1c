// `nctlm sweep`: points run as child processes of this same binary (`nctlm run ... --stats-json`),
// a few at a time; each finished point becomes rows/<id>.json (written to a temp file, then
// renamed), and results.csv/results.jsonl are rebuilt from the rows in point order, also by
// rename. A killed sweep therefore leaves only whole rows, and --resume reuses every row whose
// effective-config hash matches a point of the spec.
#include "apps/nctlm/sweep.h"

#include "apps/nctlm/sweep_spec.h"
#include "models/common/atomic_file.h"
#include "models/common/version.h"
#include "platforms/platform_config.h"
#include "testbenches/testbench.h"

#include <boost/program_options.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace po = boost::program_options;
namespace fs = std::filesystem;
using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

namespace nctlm {
namespace {

using namespace sweep;
using Clock = std::chrono::steady_clock;

constexpr int kOk = 0, kUsage = 2, kFailed = 3, kInterrupted = 130;

volatile std::sig_atomic_t g_stop = 0;
void on_signal(int sig) { g_stop = sig; }

std::string self_exe() {
    std::error_code ec;
    fs::path p = fs::read_symlink("/proc/self/exe", ec);
    if (ec)
        throw std::runtime_error("cannot resolve /proc/self/exe: " + ec.message());
    return p.string();
}

void write_atomic(const fs::path& path, const std::string& text) { write_atomically(path, text); }

std::string read_text(const fs::path& path) {
    std::ifstream f(path, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

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

std::string hms(double s) {
    long t = long(s + 0.5);
    return t >= 3600 ? fmt::format("{}:{:02}:{:02}", t / 3600, t / 60 % 60, t % 60)
                     : fmt::format("{}:{:02}", t / 60, t % 60);
}

std::string axes_text(const KeyValues& axes) {
    std::string out;
    for (auto& [k, v] : axes)
        out += (out.empty() ? "" : " ") + k + "=" + v;
    return out;
}

// One point, ready to run: its command and the hash of its effective configuration.
struct Job {
    Point point;
    std::string hash;
    std::string effective_yaml;
    std::string error;  // non-empty: the configuration is invalid, nothing to run
};

// The same loading `nctlm run` does, without building anything: validates the point and gives
// the effective values (defaults filled in, units canonical) that name it.
Job prepare(const Spec& spec, const Point& p) {
    Job j{p, "", "", ""};
    try {
        ConfigTree tree = ConfigTree::from_file(spec.platform);
        if (!p.workload.empty())
            tree.merge_file(p.workload);
        for (auto& s : p.sets)
            tree.set(s);
        PlatformConfig::load(tree);
        make_testbench(spec.testbench)->configure(tree);
        tree.check_sections(PlatformConfig::sections());
        j.effective_yaml = tree.effective_yaml();
        j.hash = hash_hex(spec.testbench + "\n" + tree.effective().dump());
    } catch (const ConfigError& e) {
        j.error = e.what();
    } catch (const UnitError& e) {
        j.error = e.what();
    }
    if (!j.error.empty()) {
        std::string sets;
        for (auto& s : p.sets)
            sets += s + "\n";
        j.hash = hash_hex("invalid\n" + spec.testbench + "\n" + p.workload + "\n" + sets);
    }
    return j;
}

std::vector<std::string> run_argv(const Spec& spec, const Job& j, const fs::path& stats) {
    std::vector<std::string> argv = {"nctlm", "run", "-p", spec.platform, "-t", spec.testbench};
    if (!j.point.workload.empty())
        argv.insert(argv.end(), {"-w", j.point.workload});
    for (auto& s : j.point.sets)
        argv.insert(argv.end(), {"--set", s});
    argv.insert(argv.end(), {"--stats-json", stats.string(), "-q"});
    return argv;
}

std::string shell_quote(const std::string& s) {
    if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+@")
                          == std::string::npos)
        return s;
    std::string out = "'";
    for (char c : s)
        out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

ojson base_row(const Job& j) {
    ojson r = ojson::object();
    r["id"] = j.point.id;
    r["index"] = j.point.index;
    r["hash"] = j.hash;
    r["status"] = "pending";
    r["exit_code"] = nullptr;
    ojson axes = ojson::object();
    for (auto& [k, v] : j.point.axes)
        axes[k] = v;
    r["axes"] = axes;
    r["results"] = ojson::object();
    r["simulated_ns"] = nullptr;
    r["sim_wall_s"] = nullptr;
    r["point_wall_s"] = nullptr;
    r["error"] = "";
    return r;
}

// ---- the output directory ---------------------------------------------------------------------

struct OutDir {
    fs::path root;
    fs::path rows() const { return root / "rows"; }
    fs::path points() const { return root / "points"; }
    fs::path row(const std::string& id) const { return rows() / (id + ".json"); }
    fs::path manifest() const { return root / "sweep.json"; }
};

ojson plot_json(const PlotSpec& p) {
    return {{"x", p.x}, {"y", p.y}, {"hue", p.hue}, {"logx", p.logx}, {"logy", p.logy}, {"title", p.title},
            {"file", p.file}};
}

ojson plots_json(const Spec& spec) {
    ojson plots = ojson::array();
    for (auto& p : spec.plots)
        plots.push_back(plot_json(p));
    return plots;
}

void write_manifest(const OutDir& out, const Spec& spec, const std::vector<Job>& jobs) {
    ojson m = ojson::object();
    m["name"] = spec.name;
    m["spec"] = spec.file;
    m["nctlm_version"] = version();
    m["platform"] = spec.platform;
    m["testbench"] = spec.testbench;
    m["workload"] = spec.workload;
    m["axes"] = spec.axis_names();
    m["plots"] = plots_json(spec);
    m["points"] = ojson::array();
    for (auto& j : jobs) {
        ojson p = {{"id", j.point.id}, {"index", j.point.index}, {"hash", j.hash}};
        ojson axes = ojson::object();
        for (auto& [k, v] : j.point.axes)
            axes[k] = v;
        p["axes"] = axes;
        m["points"].push_back(p);
    }
    write_atomic(out.manifest(), m.dump(1) + "\n");
}

void write_point_yaml(const OutDir& out, const Spec& spec, const Job& j) {
    std::string text = fmt::format("# sweep {} point {}: {}\n", spec.name, j.point.id, axes_text(j.point.axes));
    if (!j.error.empty()) {
        text += "# invalid: " + j.error + "\n";
    } else {
        std::string cmd = "nctlm";
        for (auto& a : run_argv(spec, j, out.points() / (j.point.id + ".json")))
            if (a != "nctlm")
                cmd += " " + shell_quote(a);
        text += "# replay: " + cmd + "\n# effective config hash " + j.hash + "\n" + j.effective_yaml;
    }
    write_atomic(out.points() / (j.point.id + ".yaml"), text);
}

std::optional<ojson> read_row(const fs::path& path) {
    std::error_code ec;
    if (!fs::exists(path, ec))
        return std::nullopt;
    try {
        return ojson::parse(read_text(path));
    } catch (const std::exception&) {
        return std::nullopt;  // cannot happen with rename, but a hand-edited file must not stop a merge
    }
}

// Rows of earlier runs whose point finished cleanly, by effective-config hash.
std::map<std::string, ojson> done_rows(const OutDir& out) {
    std::map<std::string, ojson> done;
    std::error_code ec;
    for (auto& e : fs::directory_iterator(out.rows(), ec)) {
        if (e.path().extension() != ".json")
            continue;
        auto r = read_row(e.path());
        if (r && r->value("status", "") == "ok" && r->contains("hash"))
            done[(*r)["hash"].get<std::string>()] = *r;
    }
    return done;
}

struct Totals {
    size_t rows = 0, ok = 0, failed = 0, missing = 0;
};

// results.csv and results.jsonl from the rows of the manifest's points, in point order.
Totals merge(const OutDir& out, const std::vector<std::string>& axis_names, const std::vector<Job>& jobs,
             const std::map<size_t, ojson>* in_memory) {
    std::vector<ojson> records;
    Totals t;
    for (auto& j : jobs) {
        std::optional<ojson> r;
        if (in_memory) {
            auto it = in_memory->find(j.point.index);
            if (it != in_memory->end())
                r = it->second;
        } else {
            r = read_row(out.row(j.point.id));
            if (r && r->value("hash", "") != j.hash)
                r.reset();  // a row of some other sweep that used this directory
        }
        if (!r) {
            ++t.missing;
            continue;
        }
        ++t.rows;
        ((*r)["status"] == "ok" ? t.ok : t.failed)++;
        records.push_back(*r);
    }
    Table table = make_table(axis_names, records);
    write_atomic(out.root / "results.csv", to_csv(table));
    write_atomic(out.root / "results.jsonl", to_jsonl(table));
    return t;
}

std::string plot_script() {
    if (const char* env = std::getenv("NCTLM_PLOT"))
        return env;
    return find_script("plot");
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

std::string find_script(const std::string& name) {
    for (fs::path p : {fs::path(NCTLM_SOURCE_DIR) / "scripts" / name,
                       fs::path(self_exe()).parent_path() / "../../scripts" / name,
                       fs::path(self_exe()).parent_path() / "../share/nctlm/scripts" / name,
                       fs::path(NCTLM_INSTALLED_DATA_DIR) / "scripts" / name})
        if (fs::exists(p))
            return fs::canonical(p).string();
    return "";
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

namespace {

// Draws the spec's plots once every point is in, several at once (each is a separate matplotlib
// process of ~0.5 s), so a sweep with many plots is not drawn one after another.
void make_plots(const OutDir& out, const std::string& name, const ojson& plots, size_t workers = 2) {
    if (plots.empty())
        return;
    std::string script = plot_script();
    if (script.empty()) {
        std::cerr << "sweep: no scripts/plot found (set NCTLM_PLOT); skipping the plot\n";
        return;
    }
    // The plot labels axes from this executable's field lists (`describe --schema`).
    setenv("NCTLM_EXE", self_exe().c_str(), 1);
    std::vector<std::vector<std::string>> commands;
    std::vector<fs::path> targets;
    int i = 0;
    for (auto& p : plots) {
        std::string file = p.value("file", "");
        if (file.empty())
            file = plots.size() == 1 ? name + ".png" : fmt::format("{}-{}.png", name, i);
        ++i;
        std::vector<std::string> argv = {script, out.root.string(), "--x", p["x"].get<std::string>()};
        for (auto& y : p["y"])
            argv.insert(argv.end(), {"--y", y.get<std::string>()});
        if (!p.value("hue", "").empty())
            argv.insert(argv.end(), {"--hue", p["hue"].get<std::string>()});
        if (p.value("logx", false))
            argv.push_back("--logx");
        if (p.value("logy", false))
            argv.push_back("--logy");
        argv.insert(argv.end(), {"--title", p.value("title", "").empty() ? name : p["title"].get<std::string>()});
        fs::path target = fs::path(file).is_absolute() ? fs::path(file) : out.root / file;
        argv.insert(argv.end(), {"-o", target.string()});
        commands.push_back(argv);
        targets.push_back(target);
    }
    std::vector<int> rcs = run_all(commands, workers);
    for (size_t k = 0; k < commands.size(); ++k) {
        if (rcs[k] != 0)
            std::cerr << fmt::format("sweep: the plot failed (exit {}); rerun: {}\n", rcs[k], [&] {
                std::string cmd;
                for (auto& a : commands[k])
                    cmd += (cmd.empty() ? "" : " ") + shell_quote(a);
                return cmd;
            }());
        else
            std::cerr << "sweep: plot " << targets[k].string() << "\n";
    }
}

// ---- progress ---------------------------------------------------------------------------------

class Progress {
public:
    Progress(size_t total, size_t skipped) : total_(total), done_(skipped), skipped_(skipped), tty_(isatty(2)) {}
    void finished(const ojson& row, double seconds) {
        ++done_;
        failed_ += row["status"] != "ok";
        if (tty_) {
            draw(true);
            return;
        }
        std::string axes;
        for (auto& [k, v] : row["axes"].items())
            axes += (axes.empty() ? "" : " ") + k + "=" + v.get<std::string>();
        std::cerr << fmt::format("[{}/{}] {} {:<8} {:6.2f} s  {}{}\n", done_, total_, row["id"].get<std::string>(),
                                 row["status"].get<std::string>(), seconds, axes,
                                 row["status"] == "ok" ? "" : "  " + row["error"].get<std::string>());
    }
    // How long the pool may sleep before the bar wants redrawing (its elapsed time and ETA).
    double redraw_every_s() const { return tty_ ? 0.2 : 1.0; }
    void tick(size_t running) {
        running_ = running;
        if (tty_ && Clock::now() - last_ > std::chrono::milliseconds(200))
            draw(false);
    }
    void end() {
        running_ = 0;
        if (tty_) {
            draw(true);
            std::cerr << "\n";
        }
    }

private:
    void draw(bool) {
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
    size_t total_, done_, skipped_, failed_ = 0, running_ = 0;
    bool tty_;
    Clock::time_point start_ = Clock::now(), last_{};
};

// ---- the local pool -----------------------------------------------------------------------------

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
    fs::path stats = out.points() / (j.point.id + ".json"), log = out.points() / (j.point.id + ".log");
    std::error_code ec;
    fs::remove(stats, ec);
    std::vector<std::string> argv = run_argv(spec, j, stats);
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
    r["point_wall_s"] = std::chrono::duration<double>(Clock::now() - c.start).count();
    fs::path stats = out.points() / (j.point.id + ".json"), log = out.points() / (j.point.id + ".log");
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
            r["simulated_ns"] = (*report)["sim"].value("simulated_ns", json());
            r["sim_wall_s"] = (*report)["sim"].value("wall_s", json());
        }
    }
    if (c.timed_out) {
        r["status"] = "timeout";
        r["error"] = fmt::format("killed after the {:.0f} s timeout", r["point_wall_s"].get<double>());
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

// Runs `jobs` (those not done yet) with up to `workers` children. Rows go to rows/ as they
// finish; `on_row` sees each. Returns false if interrupted.
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
                r["exit_code"] = kUsage;
                r["error"] = j->error;
                write_atomic(out.row(j->point.id), r.dump() + "\n");
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
            write_atomic(out.row(c.job->point.id), r.dump() + "\n");
            on_row(r);
            progress.finished(r, r["point_wall_s"].get<double>());
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

// ---- Slurm -----------------------------------------------------------------------------------------

std::string capture(const std::string& command, int* rc = nullptr) {
    std::string out;
    FILE* p = popen(command.c_str(), "r");
    if (!p)
        throw std::runtime_error("cannot run " + command);
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0)
        out.append(buf, n);
    int status = pclose(p);
    if (rc)
        *rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return out;
}

bool on_path(const std::string& program) {
    int rc = 0;
    capture("command -v " + program + " >/dev/null 2>&1", &rc);
    return rc == 0;
}

size_t count_rows(const OutDir& out, const std::vector<Job>& jobs) {
    size_t n = 0;
    std::error_code ec;
    for (auto& j : jobs)
        n += fs::exists(out.row(j.point.id), ec);
    return n;
}

// Submits one array job whose task i runs `nctlm sweep SPEC -o DIR --slice i/T`; waits for it
// unless told not to. Returns false if interrupted or the submission failed.
bool run_slurm(const Spec& spec, const std::vector<Job>& jobs, size_t todo, size_t tasks, double timeout_s,
               const std::vector<std::string>& sbatch_args, bool wait, const OutDir& out, size_t max_points) {
    if (!on_path("sbatch") || !on_path("squeue"))
        throw ConfigError("--backend slurm: sbatch/squeue not found on PATH (scripts/slurm-local start "
                          "runs a cluster on this machine; see docs/sweeps.md)");
    // Every Slurm command is bounded: a dead controller must not hang the sweep.
    const std::string bound = on_path("timeout") ? "timeout 60 " : "";
    // A job submitted with no node up stays pending forever: refuse up front, with the states seen.
    if (on_path("sinfo")) {
        int src = 0;
        std::string states = capture(bound + "sinfo -h -o %T 2>&1", &src);
        if (src != 0)
            throw ConfigError("--backend slurm: sinfo failed (exit " + std::to_string(src) +
                              "; is slurmctld running?): " + states);
        bool live = false;
        for (const char* s : {"idle", "mix", "alloc", "comp", "plnd"})
            live = live || states.find(s) != std::string::npos;
        if (!live)
            throw ConfigError("--backend slurm: no Slurm node is up (sinfo node states: " +
                              (states.empty() ? std::string("none") : states.substr(0, states.find_last_not_of(" \n") + 1)) +
                              "); start one (scripts/slurm-local start) or use --backend local");
    }
    fs::create_directories(out.root / "slurm");
    tasks = std::max<size_t>(1, std::min(tasks, jobs.size()));
    std::string exe = self_exe();
    fs::path script = out.root / "slurm" / "sweep.sbatch";
    std::string text = fmt::format(
        "#!/bin/bash\n"
        "# nctlm sweep {name}: task i of {tasks} runs the points whose index % {tasks} == i.\n"
        "#SBATCH --job-name=nctlm-{name}\n"
        "#SBATCH --output={dir}/slurm/%A_%a.out\n"
        "#SBATCH --array=0-{last}\n"
        "#SBATCH --cpus-per-task=1\n"
        "#SBATCH --ntasks=1\n"
        "exec {exe} sweep {spec} -o {dir} --slice \"$SLURM_ARRAY_TASK_ID/{tasks}\" -j 1 --resume --timeout {timeout} --max-points {max_points}\n",
        fmt::arg("name", spec.name), fmt::arg("tasks", tasks), fmt::arg("dir", shell_quote(out.root.string())),
        fmt::arg("last", tasks - 1), fmt::arg("exe", shell_quote(exe)), fmt::arg("spec", shell_quote(spec.file)),
        fmt::arg("timeout", timeout_s), fmt::arg("max_points", max_points));
    write_atomic(script, text);
    std::string cmd = bound + "sbatch --parsable";
    for (auto& a : sbatch_args)
        cmd += " " + shell_quote(a);
    if (const char* extra = std::getenv("NCTLM_SBATCH_ARGS"))
        cmd += std::string(" ") + extra;  // split by the shell on purpose: "--partition=x --account=y"
    cmd += " " + shell_quote(script.string()) + " 2>&1";
    int rc = 0;
    std::string reply = capture(cmd, &rc);
    if (rc != 0)
        throw std::runtime_error("sbatch failed (exit " + std::to_string(rc) + "): " + reply);
    std::string job_id = reply.substr(0, reply.find_first_of(";\n"));
    std::cerr << fmt::format("sweep {}: submitted Slurm array job {} ({} tasks, {} points to run)\n", spec.name,
                             job_id, tasks, todo);
    write_atomic(out.root / "slurm" / "job_id", job_id + "\n");
    if (!wait) {
        std::cerr << "sweep: not waiting; merge later with `nctlm sweep --collect " << out.root.string() << "`\n";
        return true;
    }
    bool tty = isatty(2);
    size_t last_count = size_t(-1);
    auto start = Clock::now(), last_progress = start;
    double pending_limit_s = 600;
    if (const char* env = std::getenv("NCTLM_SLURM_PENDING_S"))
        pending_limit_s = std::max(1.0, std::atof(env));
    while (true) {
        if (g_stop) {
            std::cerr << "\nsweep: interrupted; cancelling job " << job_id << "\n";
            capture("scancel " + shell_quote(job_id) + " 2>&1");
            return false;
        }
        int qrc = 0;
        std::string q = capture(bound + "squeue -h -j " + shell_quote(job_id) + " -o %T 2>/dev/null", &qrc);
        size_t n = count_rows(out, jobs);
        double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
        if (tty)
            std::cerr << fmt::format("\r[slurm job {}] {}/{} rows, {} elapsed\x1b[K", job_id, n, jobs.size(),
                                     hms(elapsed))
                      << std::flush;
        else if (n != last_count)
            std::cerr << fmt::format("[slurm job {}] {}/{} rows\n", job_id, n, jobs.size());
        bool all_pending = q.find("PENDING") != std::string::npos &&
                           q.find_first_not_of("PENDING \n") == std::string::npos;  // every task PENDING
        if (n != last_count || !all_pending)
            last_progress = Clock::now();
        last_count = n;
        // Gone from the queue (or unknown once purged): done.
        if (q.find_first_not_of(" \n") == std::string::npos)
            break;
        // Only pending and no row for too long: the cluster cannot run it (nodes went down).
        if (std::chrono::duration<double>(Clock::now() - last_progress).count() > pending_limit_s) {
            capture(bound + "scancel " + shell_quote(job_id) + " 2>&1");
            throw ConfigError(fmt::format("--backend slurm: job {} stayed pending for {:.0f} s with no node running "
                                          "it; cancelled (set NCTLM_SLURM_PENDING_S to wait longer)",
                                          job_id, pending_limit_s));
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
    if (tty)
        std::cerr << "\n";
    return true;
}

// ---- collect ---------------------------------------------------------------------------------------

int report(const OutDir& out, const std::string& name, const Totals& t, size_t skipped, double seconds) {
    std::cerr << fmt::format("sweep {}: {} points: {} ok, {} failed{}{}{}; results in {}\n", name,
                             t.rows + t.missing, t.ok, t.failed,
                             t.missing ? fmt::format(", {} missing", t.missing) : "",
                             skipped ? fmt::format(" ({} reused by --resume)", skipped) : "",
                             seconds >= 0 ? fmt::format(" in {:.1f} s", seconds) : "",
                             (out.root / "results.csv").string());
    return t.failed || t.missing ? kFailed : kOk;
}

int collect(const fs::path& dir, bool no_plot) {
    OutDir out{fs::absolute(dir).lexically_normal()};
    if (!fs::exists(out.manifest()))
        throw ConfigError("--collect " + dir.string() + ": no sweep.json there (not a sweep output directory)");
    ojson m = ojson::parse(read_text(out.manifest()));
    std::vector<Job> jobs;
    for (auto& p : m["points"]) {
        Job j;
        j.point.id = p["id"];
        j.point.index = p["index"];
        j.hash = p["hash"];
        for (auto& [k, v] : p["axes"].items())
            j.point.axes.emplace_back(k, v.get<std::string>());
        jobs.push_back(std::move(j));
    }
    Totals t = merge(out, m["axes"].get<std::vector<std::string>>(), jobs, nullptr);
    if (!no_plot)
        make_plots(out, m["name"], m["plots"]);
    return report(out, m["name"], t, 0, -1);
}

} // namespace

int cmd_sweep(const std::vector<std::string>& args) {
    std::string spec_file, out_dir, backend = "local", slice_text, collect_dir, timeout_text, jobs_text, tasks_text;
    size_t jobs_n = 0, tasks = 1000;
    bool resume = false, dry_run = false, no_wait = false, no_plot = false;
    size_t max_points = 100000;
    std::vector<std::string> sbatch_args;
    po::options_description desc("nctlm sweep SPEC.yaml -o DIR");
    desc.add_options()("help,h", "this help")                                                          //
        ("spec", po::value(&spec_file), "sweep spec YAML (configs/sweeps/*.yaml)")                     //
        ("output,o", po::value(&out_dir), "output directory (results.csv, results.jsonl, points/)")    //
        ("jobs,j", po::value(&jobs_text), "points run at once (default: the number of cores)")            //
        ("resume", po::bool_switch(&resume), "skip points whose effective config already has an ok row")  //
        ("backend", po::value(&backend), "local (default) or slurm (one sbatch --array job)")          //
        ("dry-run,n", po::bool_switch(&dry_run), "list the points and their settings; run nothing")     //
        ("timeout", po::value(&timeout_text), "per-point timeout, seconds or with a unit (spec: timeout)")  //
        ("collect", po::value(&collect_dir), "merge the rows in DIR into results.csv/jsonl (after Slurm)")  //
        ("slice", po::value(&slice_text), "I/N: run only points with index % N == I, no merge (Slurm tasks)")  //
        ("slurm-tasks", po::value(&tasks_text), "array tasks for --backend slurm (default: one per point, <= 1000)")  //
        ("sbatch-arg", po::value(&sbatch_args)->composing(), "extra sbatch argument, e.g. --partition=cpu (repeatable)")  //
        ("no-wait", po::bool_switch(&no_wait), "--backend slurm: submit and return; --collect later")  //
        ("no-plot", po::bool_switch(&no_plot), "do not draw the spec's plots (scripts/plot DIR ... later)")  //
        ("max-points", po::value(&max_points), "refuse a spec with more points than this (default 100000)");
    po::positional_options_description pos;
    pos.add("spec", 1);
    po::variables_map vm;
    po::store(po::command_line_parser(args).options(desc).positional(pos).run(), vm);
    if (vm.count("help")) {
        std::cout << desc << "\n";
        return kOk;
    }
    po::notify(vm);
    // Counts parsed strictly: boost reads "-1" into a size_t as 2^64 - 1.
    auto count_flag = [](const std::string& flag, const std::string& text, uint64_t hi) {
        try {
            uint64_t v = detail::parse_count(text);
            detail::check_range(double(v), 1, double(hi), std::to_string(v));
            return size_t(v);
        } catch (const UnitError& e) {
            throw ConfigError(flag + " " + text + ": " + e.what());
        }
    };
    if (!jobs_text.empty())
        jobs_n = count_flag("--jobs", jobs_text, 4096);
    if (!tasks_text.empty())
        tasks = count_flag("--slurm-tasks", tasks_text, 1000000);
    if (!collect_dir.empty())
        return collect(collect_dir, no_plot);
    if (spec_file.empty())
        throw ConfigError("nctlm sweep: give a spec file (nctlm sweep SPEC.yaml -o DIR)");
    if (backend != "local" && backend != "slurm")
        throw ConfigError("--backend " + backend + ": expected local or slurm");

    Spec spec = Spec::load(spec_file);
    Slice slice = slice_text.empty() ? Slice{} : Slice::parse(slice_text);
    bool sliced = !slice_text.empty();
    double timeout_s = spec.timeout_s;
    if (!timeout_text.empty()) {
        try {
            timeout_s = parse_timeout_seconds(timeout_text);
        } catch (const UnitError& e) {
            throw ConfigError("--timeout " + timeout_text + ": " + e.what());
        }
    }
    if (jobs_n == 0) {
        const char* slurm_cpus = std::getenv("SLURM_CPUS_PER_TASK");
        jobs_n = sliced && slurm_cpus ? std::max(1, std::atoi(slurm_cpus))
                                      : std::max<long>(1, sysconf(_SC_NPROCESSORS_ONLN));
    }

    // Refuse a runaway grid before building (and validating) a single point of it.
    if (size_t n = spec.count_points(); n > max_points)
        throw ConfigError(fmt::format("{}: the sweep has {} points, more than --max-points {}; narrow the grid "
                                      "or pass --max-points {}",
                                      spec.file, n == SIZE_MAX ? std::string("over 1.8e19") : std::to_string(n),
                                      max_points, n == SIZE_MAX ? std::string("N") : std::to_string(n)));
    std::vector<Job> jobs;
    for (auto& p : spec.points())
        jobs.push_back(prepare(spec, p));

    if (dry_run) {
        std::cout << fmt::format("# sweep {}: {} points, testbench {}, platform {}\n", spec.name, jobs.size(),
                                 spec.testbench, spec.platform);
        for (auto& j : jobs) {
            if (!slice.has(j.point.index))
                continue;
            std::string extra;
            for (size_t i = spec.set.size() + (j.point.axes.size() - (j.point.workload != spec.workload));
                 i < j.point.sets.size(); ++i)
                extra += " " + j.point.sets[i];
            std::cout << fmt::format("{} {} {}{}{}\n", j.point.id, j.error.empty() ? j.hash : "invalid         ",
                                     axes_text(j.point.axes), extra.empty() ? "" : "  (override:" + extra + ")",
                                     j.error.empty() ? "" : "\n     " + j.error);
        }
        return kOk;
    }
    if (out_dir.empty())
        throw ConfigError("nctlm sweep: -o DIR is required (or --dry-run)");
    OutDir out{fs::absolute(out_dir).lexically_normal()};
    std::error_code ec;
    if (fs::exists(out.root, ec) && !fs::is_directory(out.root, ec))
        throw ConfigError("-o " + out_dir + ": exists and is not a directory; give a directory for the results");
    try {
        fs::create_directories(out.rows());
        fs::create_directories(out.points());
    } catch (const fs::filesystem_error& e) {
        throw ConfigError("-o " + out_dir + ": cannot create the output directory (" + e.code().message() + ")");
    }

    // Previous rows: reused by hash with --resume (and always by Slurm tasks), else cleared.
    std::map<std::string, ojson> done;
    if (resume || sliced)
        done = done_rows(out);
    else if (!sliced)
        for (auto& e : fs::directory_iterator(out.rows()))
            fs::remove(e.path());
    if (!sliced)
        write_manifest(out, spec, jobs);

    std::map<size_t, ojson> rows;  // by point index, for the merge
    std::vector<const Job*> todo;
    size_t skipped = 0, mine = 0;
    for (auto& j : jobs) {
        if (!slice.has(j.point.index))
            continue;
        ++mine;
        auto it = j.error.empty() ? done.find(j.hash) : done.end();
        if (it != done.end()) {
            ojson r = it->second;
            if (r["id"] != j.point.id) {  // same configuration, new place in a changed spec
                ojson fresh = base_row(j);
                for (auto& [k, v] : r.items())
                    if (k != "id" && k != "index" && k != "axes")
                        fresh[k] = v;
                r = fresh;
                write_atomic(out.row(j.point.id), r.dump() + "\n");
            }
            rows[j.point.index] = r;
            ++skipped;
            continue;
        }
        write_point_yaml(out, spec, j);
        todo.push_back(&j);
    }

    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);
    auto start = Clock::now();
    bool complete = true;
    if (backend == "slurm" && !sliced) {
        complete = run_slurm(spec, jobs, todo.size(), tasks, timeout_s, sbatch_args, !no_wait, out, max_points);
        if (no_wait)
            return kOk;
        if (complete) {
            Totals t = merge(out, spec.axis_names(), jobs, nullptr);
            if (!no_plot)
                make_plots(out, spec.name, plots_json(spec), jobs_n);
            return report(out, spec.name, t, skipped,
                          std::chrono::duration<double>(Clock::now() - start).count());
        }
        return kInterrupted;
    }

    if (!sliced)
        std::cerr << fmt::format("sweep {}: {} points ({} to run, {} reused), -j {}, timeout {} s, output {}\n",
                                 spec.name, jobs.size(), todo.size(), skipped, jobs_n, timeout_s, out.root.string());
    Progress progress(mine, skipped);
    auto last_merge = Clock::now();
    complete = run_local(spec, todo, jobs_n, timeout_s, out, progress, [&](const ojson& r) {
        rows[r["index"].get<size_t>()] = r;
        // Keep results.* current while a long sweep runs, without rewriting them per point.
        if (!sliced && Clock::now() - last_merge > std::chrono::seconds(2)) {
            merge(out, spec.axis_names(), jobs, &rows);
            last_merge = Clock::now();
        }
    });
    progress.end();
    double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    if (sliced) {
        size_t bad = 0;
        for (auto& [_, r] : rows)
            bad += r["status"] != "ok";
        std::cerr << fmt::format("sweep {} slice {}/{}: {} points, {} not ok, {:.1f} s\n", spec.name, slice.index,
                                 slice.count, mine, bad, seconds);
        return !complete ? kInterrupted : bad ? kFailed : kOk;
    }
    Totals t = merge(out, spec.axis_names(), jobs, &rows);
    if (!complete) {
        std::cerr << fmt::format("sweep {}: interrupted; {} rows kept, continue with --resume\n", spec.name, t.rows);
        return kInterrupted;
    }
    if (!no_plot)
        make_plots(out, spec.name, plots_json(spec), jobs_n);
    return report(out, spec.name, t, skipped, seconds);
}

} // namespace nctlm
