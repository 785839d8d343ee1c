#include "study/sweep_run.h"

#include "models/common/atomic_file.h"
#include "models/common/config.h"
#include "study/exit_status.h"
#include "study/local_pool.h"
#include "study/slurm_backend.h"
#include "study/sweep_plots.h"

#include <algorithm>
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
                write_atomically(out.row(j.point.id), r.dump() + "\n");
            }
            rows[j.point.index] = r;
            ++skipped;
            continue;
        }
        write_point_yaml(out, spec, j);
        todo.push_back(&j);
    }

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
