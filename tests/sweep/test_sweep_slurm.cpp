// `nctlm sweep --backend slurm` on a single-node Slurm cluster started on localhost by
// scripts/slurm-local: the rows equal those of a local run of the same spec.
#include "tests/sweep/sweep_test_util.h"

#include <gtest/gtest.h>

using namespace nctlm::test;
namespace fs = std::filesystem;

namespace {

bool have(const char* program) {
    return system((std::string("command -v ") + program + " >/dev/null 2>&1 || test -x /usr/sbin/" + program).c_str()) ==
           0;
}

// Starts the cluster; stops it (exactly its daemons) however the test ends.
struct LocalCluster {
    std::string dir, error;
    explicit LocalCluster(const std::string& d) : dir(d) {
        auto r = run_shell(source_path("scripts/slurm-local") + " start " + dir);
        if (r.exit_code != 0)
            error = r.err;
        else
            setenv("SLURM_CONF", (dir + "/slurm.conf").c_str(), 1);
    }
    ~LocalCluster() { run_shell(source_path("scripts/slurm-local") + " stop " + dir); }
};

} // namespace

TEST(SweepSlurm, ArrayJobRowsEqualALocalRun) {
    for (const char* p : {"munged", "slurmctld", "slurmd", "sbatch", "squeue", "sinfo"})
        if (!have(p))
            GTEST_SKIP() << p << " not installed: the Slurm test needs slurmctld slurmd slurm-client munge "
                                 "(scripts/install-deps --slurm)";
    std::string dir = temp_dir();
    fs::permissions(dir, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                             fs::perms::others_read | fs::perms::others_exec);  // munged checks the socket's path
    std::string spec = dir + "/spec.yaml";
    write_file(spec, "name: slurm_small\nplatform: " + platform("tiny") + "\ntestbench: b2b\n"
                     "grid:\n  dma.channel_release: [on_accept, on_response]\n  testbench.n: [2, 8]\n"
                     "zip:\n  testbench.bytes: [1 KiB, 8 KiB]\n");
    auto local = run_cli("sweep " + spec + " -o " + dir + "/local -j 2");
    ASSERT_EQ(local.exit_code, 0) << local.err;
    auto expected = rows(dir + "/local");
    ASSERT_EQ(expected.size(), 8u);

    LocalCluster cluster(dir + "/cluster");
    ASSERT_TRUE(cluster.error.empty()) << cluster.error;
    auto r = run_cli("sweep " + spec + " -o " + dir + "/slurm --backend slurm --slurm-tasks 3");
    ASSERT_EQ(r.exit_code, 0) << r.err << "\n" << run_shell("tail -5 " + dir + "/slurm/slurm/*.out").out;
    EXPECT_NE(r.err.find("submitted Slurm array job"), std::string::npos) << r.err;
    auto got = rows(dir + "/slurm");
    ASSERT_EQ(got.size(), expected.size());
    for (size_t i = 0; i < got.size(); ++i)
        EXPECT_EQ(model_columns(got[i]), model_columns(expected[i])) << i;
    // Three array tasks, each its own slice of the points.
    for (int t = 0; t < 3; ++t)
        EXPECT_NE(run_shell("cat " + dir + "/slurm/slurm/*_" + std::to_string(t) + ".out").out.find(
                      "slice " + std::to_string(t) + "/3"),
                  std::string::npos);
    // --collect merges the same rows again from the directory alone.
    fs::remove(dir + "/slurm/results.jsonl");
    auto c = run_cli("sweep --collect " + dir + "/slurm");
    ASSERT_EQ(c.exit_code, 0) << c.err;
    EXPECT_EQ(rows(dir + "/slurm").size(), expected.size());
    fs::remove_all(dir + "/local");
}

// `nctlm sensitivity --backend slurm` runs its points as the same array job; the report equals
// that of a local run.
TEST(SweepSlurm, SensitivityOnSlurmEqualsLocal) {
    for (const char* p : {"munged", "slurmctld", "slurmd", "sbatch", "squeue", "sinfo"})
        if (!have(p))
            GTEST_SKIP() << p << " not installed (scripts/install-deps --slurm)";
    std::string dir = temp_dir();
    fs::permissions(dir, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                             fs::perms::others_read | fs::perms::others_exec);
    std::string args = "sensitivity -p " + platform("tiny") + " -t probe --params hbm.pc_bandwidth,noc.hop_cycles "
                       "--no-plot -o " + dir;
    auto local = run_cli(args + "/local -j 2");
    ASSERT_EQ(local.exit_code, 0) << local.err;
    {  // the cluster stops (its pids file read) before the directory goes
        LocalCluster cluster(dir + "/cluster");
        ASSERT_TRUE(cluster.error.empty()) << cluster.error;
        auto r = run_cli(args + "/slurm --backend slurm");
        ASSERT_EQ(r.exit_code, 0) << r.err;
        EXPECT_NE(r.err.find("submitted Slurm array job"), std::string::npos) << r.err;
    }
    auto a = nlohmann::json::parse(read_file(dir + "/local/sensitivity.json"));
    auto b = nlohmann::json::parse(read_file(dir + "/slurm/sensitivity.json"));
    EXPECT_EQ(a["figures"], b["figures"]);
    EXPECT_EQ(a["figures"]["latency_ns"]["elasticities"].size(), 2u);
    fs::remove_all(dir);
}
