// `plugtrain sweep --slurm` against a real one-node Slurm (support/local_slurm.h): a job array
// whose report equals the local sweep's, an scancel of one array task and a requeue that finish
// that trial from its checkpoint, ASHA whose promotions are new array tasks resuming their
// trials, `sweep --status` while it runs, and Slurm's own refusal passed through in one line.
// ctest-label: slurm
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/experiment_toml.h"
#include "support/local_slurm.h"
#include "sweep/sweep_report.h"

namespace plugtrain {
namespace slurm_sweep_test {

namespace fs = std::filesystem;
using testing::shell_quote;
using testing::slurp;

using Keys = std::vector<std::pair<std::string, testing::TomlValue>>;

// SGD with momentum on synthetic 8x8 samples of 10 classes, one thread per trial; `sweep` is
// its [sweep] table.
std::string experiment(const std::string& name, int epochs, int train_size, const Keys& sweep) {
  return testing::ExperimentToml::synthetic(name)
      .unset("experiment.seed")
      .set_keys("data", {{"synthetic_classes", 10},
                         {"synthetic_train_size", train_size},
                         {"synthetic_test_size", 400},
                         {"batch_size", 30}})
      .unset("optim.lr")
      .set_keys("train", {{"epochs", epochs}, {"threads", 1}})
      .set_keys("sweep", sweep)
      .text();
}

class SlurmSweepTest : public testing::SlurmTest {
 protected:
  testing::ProcessResult plugtrain(const std::string& args) const { return slurm(testing::plugtrain_command(args)); }
  void write(const std::string& file, const std::string& text) const { std::ofstream(dir() / file) << text; }
  // `sweep --status FOLDER --json`, read (stderr, where Slurm's tools may speak, left out).
  nlohmann::json sweep_status(const std::string& folder) const {
    const auto r = slurm("(" + testing::plugtrain_command("sweep --status " + folder + " --json") + " 2>/dev/null)");
    return nlohmann::json::parse(r.out);
  }
  // Waits (up to 10 minutes) until the sweep's last follow-up job says the sweep is over; its output.
  std::string wait_until_done(const fs::path& sweep) const {
    const auto r = slurm("for i in $(seq 3000); do grep -l -E 'every trial is done|trial\\(s\\) failed' " +
                         shell_quote(sweep.string()) +
                         "/slurm/next-*.out 2>/dev/null && break; sleep 0.2; done; "
                         "cat " +
                         shell_quote(sweep.string()) + "/slurm/next-*.out");
    return r.out;
  }
  // The job id a submission printed ("submitted job array N").
  static std::string array_id(const std::string& out) {
    std::smatch m;
    return std::regex_search(out, m, std::regex("submitted job array ([0-9]+)")) ? m[1].str() : "";
  }
  static std::map<std::string, double> final_accuracies(const fs::path& sweep) {
    std::map<std::string, double> out;
    const SweepReport report = build_report(sweep);
    for (const RunGroup& g : report.groups)
      for (const RunRecord* r : g.runs) out[r->folder.parent_path().filename().string()] = r->final_test_metric;
    return out;
  }
};

const Keys kGrid = {{"optim.lr", {0.01, 0.1}}, {"repeat_seeds", {1, 2}}};

TEST_F(SlurmSweepTest, AnArraySweepFinishesAndItsReportEqualsTheLocalSweeps) {
  write("grid.toml", experiment("grid", 3, 600, kGrid));
  const auto local = plugtrain("sweep grid.toml --set 'experiment.output=\"local\"'");
  ASSERT_EQ(local.exit_code, 0) << local.out;
  // A site's sbatch that says something on stderr before the job id (the real sbatch behind it).
  fs::create_directories(dir() / "bin");
  write("bin/sbatch", "#!/bin/sh\necho 'sbatch: note: this cluster is for tests' >&2\nexec /usr/bin/sbatch \"$@\"\n");
  fs::permissions(dir() / "bin" / "sbatch", fs::perms::owner_all);
  const auto submitted = slurm(testing::plugtrain_command(
      "sweep grid.toml --slurm --set 'experiment.output=\"cluster\"'", "PATH=\"$PWD/bin:$PATH\""));
  ASSERT_EQ(submitted.exit_code, 0) << submitted.out;
  EXPECT_NE(submitted.out.find("4 to submit"), std::string::npos) << submitted.out;
  ASSERT_FALSE(array_id(submitted.out).empty()) << submitted.out;
  EXPECT_EQ(sweep_status("cluster/grid/sweep").at("trials").size(), 4u);
  const std::string done = wait_until_done(dir() / "cluster" / "grid" / "sweep");
  ASSERT_NE(done.find("every trial is done"), std::string::npos) << done;
  EXPECT_EQ(final_accuracies(dir() / "cluster" / "grid" / "sweep"),
            final_accuracies(dir() / "local" / "grid" / "sweep"));
  EXPECT_EQ(sweep_status("cluster/grid/sweep").at("counts"), nlohmann::json({{"finished", 4}}));
  EXPECT_TRUE(fs::exists(dir() / "cluster" / "grid" / "sweep" / "sweep.md"));
}

TEST_F(SlurmSweepTest, ACancelledArrayTaskRequeuedFinishesItsTrialFromItsCheckpoint) {
  write("long.toml", experiment("long", 4, 60000, {{"optim.lr", {0.01, 0.02}}}));
  const auto submitted = plugtrain("sweep long.toml --slurm");
  ASSERT_EQ(submitted.exit_code, 0) << submitted.out;
  const std::string job = array_id(submitted.out);
  const fs::path sweep = dir() / "runs" / "long" / "sweep";
  const std::string log = shell_quote((sweep / "logs" / "optim.lr=0.01.log").string());
  const std::string exit_file = shell_quote((sweep / "logs" / "optim.lr=0.01.exit").string());
  // Task 0 (lr 0.01) is cancelled once it has trained an epoch, then requeued (released at once:
  // Slurm would otherwise hold a requeued job back for two minutes). The requeue waits for the
  // task's script to record the trial's exit: squeue stops listing a cancelled task before its
  // trial has written its last lines, and a requeue then would kill it mid-sentence.
  const auto cancel = slurm("for i in $(seq 3000); do grep -q '^epoch 1/4' " + log +
                            " 2>/dev/null && break; sleep 0.2; done; scancel " + job +
                            "_0; "
                            "for i in $(seq 600); do [ -e " +
                            exit_file +
                            " ] && break; sleep 0.2; done; "
                            "for i in $(seq 600); do squeue -h -j " +
                            job +
                            "_0 | grep -q . || break; sleep 0.2; done; "
                            "scontrol requeue " +
                            job + "_0 && scontrol update jobid=" + job + "_0 StartTime=now && echo REQUEUED");
  ASSERT_NE(cancel.out.find("REQUEUED"), std::string::npos) << cancel.out;
  const std::string done = wait_until_done(sweep);
  ASSERT_NE(done.find("every trial is done"), std::string::npos) << done << slurp(sweep / "logs" / "optim.lr=0.01.log");
  const std::string trial_log = slurp(sweep / "logs" / "optim.lr=0.01.log");
  EXPECT_NE(trial_log.find("SIGTERM"), std::string::npos) << trial_log;
  EXPECT_NE(trial_log.find("resum"), std::string::npos) << trial_log;
  std::ifstream csv(sweep / "optim.lr=0.01" / "version_0" / "metrics.csv");
  std::map<int, int> rows;
  for (std::string line; std::getline(csv, line);)
    if (line.rfind("epoch,", 0) == 0) ++rows[std::stoi(line.substr(6))];
  EXPECT_EQ(rows, (std::map<int, int>{{1, 1}, {2, 1}, {3, 1}, {4, 1}})) << "every epoch once, in one run folder";
  EXPECT_FALSE(fs::exists(sweep / "optim.lr=0.01" / "version_1"));
}

TEST_F(SlurmSweepTest, AshaPromotionsAreNewArrayTasksThatResumeTheirTrials) {
  write("asha.toml",
        experiment("asha", 9, 300, {{"optim.lr", {20.0, 1e-5, 0.003, 0.01, 0.03, 0.1}}, {"scheduler", "asha"}}));
  const auto submitted = plugtrain("sweep asha.toml --slurm");
  ASSERT_EQ(submitted.exit_code, 0) << submitted.out;
  EXPECT_NE(submitted.out.find("6 to submit"), std::string::npos) << submitted.out;
  const fs::path sweep = dir() / "runs" / "asha" / "sweep";
  const std::string done = wait_until_done(sweep);
  ASSERT_NE(done.find("every trial is done"), std::string::npos) << done;
  // Three arrays: the first rung's 6 trials, the 2 promoted to epoch 3, the 1 that trains to 9.
  std::map<int, int> tasks_per_job;  // in the order Slurm numbered the jobs
  std::ifstream rows(sweep / "slurm" / "jobs.tsv");
  for (std::string line; std::getline(rows, line);) ++tasks_per_job[std::stoi(line.substr(0, line.find('\t')))];
  std::vector<int> sizes;
  for (const auto& [job, n] : tasks_per_job) sizes.push_back(n);
  EXPECT_EQ(sizes, (std::vector<int>{6, 2, 1})) << slurp(sweep / "slurm" / "jobs.tsv");
  EXPECT_NE(done.find("compute: 16 epochs trained; the full grid trains 54 (30%)"), std::string::npos) << done;
  EXPECT_NE(done.find("| optim.lr=20.0 | stopped at rung 1 (epoch 1"), std::string::npos) << done;
  EXPECT_FALSE(fs::exists(sweep / "optim.lr=0.1" / "version_1")) << "promotions resume, never restart";
}

TEST_F(SlurmSweepTest, SlurmsOwnRefusalIsOneLine) {
  write("grid.toml", experiment("grid", 1, 600, kGrid));
  const auto r = plugtrain("sweep grid.toml --slurm --partition nowhere");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("plugtrain: error: --slurm: sbatch refused the job array: sbatch: error: Batch job submission "
                       "failed: Invalid partition name specified"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 2) << "the sweep's header line and the error: " << r.out;
}

}  // namespace slurm_sweep_test
}  // namespace plugtrain
