#include "study/sweep_run.h"

#include "models/common/atomic_file.h"
#include "models/common/config.h"
#include "study/exit_status.h"
#include "study/local_pool.h"
#include "study/slurm_backend.h"
#include "study/spec_check.h"
#include "study/sweep_plots.h"

#include <algorithm>
#include <set>
#include <cstdlib>
#include <fmt/format.h>
#include <iostream>
#include <unistd.h>

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

namespace nctlm::sweep {

int collect(const std::string& dir, bool plot) {
    OutDir out{fs::absolute(dir).lexically_normal()};
    if (!fs::exists(out.manifest()))
        throw ConfigError("--collect " + dir + ": no sweep.json there (not a sweep output directory)");
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
    if (plot)
        make_plots(out, m["name"], m["plots"]);
    return report(out, m["name"], t, 0, -1);
}

namespace {

// Point files of ids the spec no longer has (a resumed, shrunk spec): they would describe points
// that are not in results.csv.
void remove_points_not_in(const OutDir& out, const std::vector<Job>& jobs) {
    std::set<std::string> ids;
    for (auto& j : jobs)
        ids.insert(j.point.id);
    std::error_code ec;
    std::vector<fs::path> stale;
    for (auto& e : fs::directory_iterator(out.points(), ec))
        if (!ids.count(e.path().stem().string()))
            stale.push_back(e.path());
    for (auto& f : stale)
        fs::remove(f, ec);
}

} // namespace

int run_sweep(const Spec& spec, const RunSettings& settings) {
    const RunSettings& o = settings;
    if (o.backend != "local" && o.backend != "slurm")
        throw ConfigError("--backend " + o.backend + ": expected local or slurm");
    Slice slice = o.slice.empty() ? Slice{} : Slice::parse(o.slice);
    bool sliced = !o.slice.empty();
    double timeout_s = o.timeout_s.value_or(spec.timeout_s);
    size_t jobs_n = o.jobs;
    if (jobs_n == 0) {
        const char* slurm_cpus = std::getenv("SLURM_CPUS_PER_TASK");
        jobs_n = sliced && slurm_cpus ? std::max(1, std::atoi(slurm_cpus))
                                      : std::max<long>(1, sysconf(_SC_NPROCESSORS_ONLN));
    }
    const size_t max_points = o.max_points;
    const std::string& out_dir = o.out_dir;

    // Refuse a runaway grid before building (and validating) a single point of it.
    if (size_t n = spec.count_points(); n > max_points)
        throw ConfigError(fmt::format("{}: the sweep has {} points, more than --max-points {}; narrow the grid "
                                      "or pass --max-points {}",
                                      spec.file, n == SIZE_MAX ? std::string("over 1.8e19") : std::to_string(n),
                                      max_points, n == SIZE_MAX ? std::string("N") : std::to_string(n)));
    check_spec(spec);
    std::vector<Job> jobs;
    for (auto& p : spec.points())
        jobs.push_back(prepare(spec, p));

    if (o.dry_run) {
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
        return kExitOk;
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
    if (o.resume || sliced)
        done = done_rows(out);
    else if (!sliced)
        for (auto& e : fs::directory_iterator(out.rows()))
            fs::remove(e.path());
    if (!sliced)
        write_manifest(out, spec, jobs);

    std::map<size_t, ojson> rows;  // by point index, for the merge
    std::vector<const Job*> todo;
    size_t skipped = 0, mine = 0;
    // A reused row's point files (stats JSON, stderr log) come from the id that ran it, which may
    // differ in a changed spec: read them all before any is rewritten.
    std::map<std::string, std::map<std::string, std::string>> carried;  // new id -> ext -> text
    auto read_if = [](const fs::path& f, std::map<std::string, std::string>& into, const char* ext) {
        std::error_code ec;
        if (fs::exists(f, ec))
            into[ext] = read_text(f);
    };
    for (auto& j : jobs) {
        if (!slice.has(j.point.index) || !j.error.empty())
            continue;
        auto it = done.find(j.hash);
        if (it != done.end() && it->second["id"] != j.point.id) {
            std::string from = it->second["id"].get<std::string>();
            for (const char* ext : {".json", ".log"})
                read_if(out.point_file(from, ext), carried[j.point.id], ext);
        }
    }
    for (auto& j : jobs) {
        if (!slice.has(j.point.index))
            continue;
        ++mine;
        // Every point's YAML is rewritten: its settings and replay line are this spec's.
        write_point_yaml(out, spec, j);
        auto it = j.error.empty() ? done.find(j.hash) : done.end();
        if (it != done.end()) {
            ojson r = it->second;
            if (r["id"] != j.point.id) {  // same configuration, new place in a changed spec
                ojson fresh = base_row(j);
                for (auto& [k, v] : r.items())
                    if (k != "id" && k != "index" && k != "axes")
                        fresh[k] = v;
                r = fresh;
                write_atomically(out.row(j.point.id), r.dump() + "\n");
                for (const char* ext : {".json", ".log"}) {
                    auto& files = carried[j.point.id];
                    std::error_code ec;
                    if (files.count(ext))
                        write_atomically(out.point_file(j.point.id, ext), files[ext]);
                    else
                        fs::remove(out.point_file(j.point.id, ext), ec);
                }
            }
            rows[j.point.index] = r;
            ++skipped;
            continue;
        }
        // To run (or invalid): nothing of another point may stay under its id.
        std::error_code ec;
        for (const char* ext : {".json", ".log"})
            fs::remove(out.point_file(j.point.id, ext), ec);
        todo.push_back(&j);
    }
    if (!sliced && o.prune)
        remove_points_not_in(out, jobs);

    catch_stop_signals();
    auto start = Clock::now();
    bool complete = true;
    if (o.backend == "slurm" && !sliced) {
        SlurmOptions so{o.slurm_tasks, timeout_s, o.sbatch_args, o.wait, max_points};
        complete = run_slurm(spec, jobs, todo.size(), so, out);
        if (!o.wait)
            return kExitOk;
        if (complete) {
            Totals t = merge(out, spec.axis_names(), jobs, nullptr);
            if (o.plot && !plot_result_fields(spec).empty())
                for (auto& j : jobs)
                    if (auto r = read_row(out.row(j.point.id)); r && (*r)["status"] == "ok") {
                        check_plot_results(spec, *r);
                        break;
                    }
            if (o.plot)
                make_plots(out, spec.name, plots_json(spec), jobs_n);
            return report(out, spec.name, t, skipped,
                          std::chrono::duration<double>(Clock::now() - start).count());
        }
        return kExitInterrupted;
    }

    if (!sliced)
        std::cerr << fmt::format("sweep {}: {} points ({} to run, {} reused), -j {}, timeout {} s, output {}\n",
                                 spec.name, jobs.size(), todo.size(), skipped, jobs_n, timeout_s, out.root.string());
    Progress progress(mine, skipped);
    auto last_merge = Clock::now();
    auto on_row = [&](const ojson& r) {
        rows[r["index"].get<size_t>()] = r;
        // Keep results.* current while a long sweep runs, without rewriting them per point.
        if (!sliced && Clock::now() - last_merge > std::chrono::seconds(2)) {
            merge(out, spec.axis_names(), jobs, &rows);
            last_merge = Clock::now();
        }
    };
    // A plot naming results: check them on one finished point before running the others, so a
    // typo in plot.y costs one point, not the whole sweep.
    if (!sliced && o.plot && !plot_result_fields(spec).empty()) {
        auto ok = std::find_if(rows.begin(), rows.end(), [](auto& r) { return r.second["status"] == "ok"; });
        while (ok == rows.end() && !todo.empty() && complete) {
            auto first = std::find_if(todo.begin(), todo.end(), [](const Job* j) { return j->error.empty(); });
            if (first == todo.end())
                break;
            const Job* j = *first;
            todo.erase(first);
            complete = run_local(spec, {j}, 1, timeout_s, out, progress, on_row);
            ok = std::find_if(rows.begin(), rows.end(), [](auto& r) { return r.second["status"] == "ok"; });
        }
        if (ok != rows.end())
            check_plot_results(spec, ok->second);
    }
    if (complete)
        complete = run_local(spec, todo, jobs_n, timeout_s, out, progress, on_row);
    progress.end();
    double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    if (sliced) {
        size_t bad = 0;
        for (auto& [_, r] : rows)
            bad += r["status"] != "ok";
        std::cerr << fmt::format("sweep {} slice {}/{}: {} points, {} not ok, {:.1f} s\n", spec.name, slice.index,
                                 slice.count, mine, bad, seconds);
        return !complete ? kExitInterrupted : bad ? kExitFailed : kExitOk;
    }
    Totals t = merge(out, spec.axis_names(), jobs, &rows);
    if (!complete) {
        std::cerr << fmt::format("sweep {}: interrupted; {} rows kept, continue with --resume\n", spec.name, t.rows);
        return kExitInterrupted;
    }
    if (o.plot)
        make_plots(out, spec.name, plots_json(spec), jobs_n);
    return report(out, spec.name, t, skipped, seconds);
}

} // namespace nctlm::sweep
