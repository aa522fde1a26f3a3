// ddp under a real Slurm (tests/slurm/local_slurm.sh: munged, slurmctld and slurmd on this
// machine): the README's srun line with no MASTER_ADDR or MASTER_PORT, submitted with sbatch,
// cancelled mid-run with scancel, and the same job submitted again, which finishes the run.
// ctest-label: slurm
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/experiment_toml.h"
#include "support/local_slurm.h"
#include "support/run_process.h"

namespace plugtrain {
namespace slurm_test {

using testing::shell_quote;
using testing::slurp;
namespace fs = std::filesystem;

// Epochs of about a second with 2 ranks on 2 cores, so a cancel after epoch 2 lands mid-run.
// No dropout or augmentation: nothing here depends on how the ranks draw.
constexpr int kEpochs = 8;
const testing::ExperimentToml kExperiment = testing::ExperimentToml::synthetic("srun")
                                                .set("experiment.seed", 5)
                                                .on_cpu()
                                                .set_keys("model", {{"hidden", {256}}, {"dropout", 0.0}})
                                                .unset("data.synthetic_classes")
                                                .set_keys("data", {{"synthetic_shape", {3, 16, 16}},
                                                                   {"synthetic_train_size", 12000},
                                                                   {"synthetic_test_size", 400},
                                                                   {"batch_size", 20}})
                                                .set("optim.lr", 0.01)
                                                .unset("optim.momentum")
                                                .set("train.epochs", kEpochs);

// wait_for PATTERN FILE: until a line of FILE matches (up to 120 s). ended JOB: until Slurm says
// the job is over, and prints that state (up to 300 s: the second job trains most of the run).
// `-t all`: plain `squeue -j` keeps listing a COMPLETED job (for MinJobAge) but drops a
// CANCELLED one, so the state is read rather than the job's absence.
const std::string kWaitFunctions =
    "wait_for() { for i in $(seq 1200); do grep -q \"$1\" \"$2\" 2>/dev/null && return 0; sleep 0.1; done; "
    "echo \"NEVER SAW $1 in $2\"; return 1; }\n"
    "ended() { for i in $(seq 3000); do s=$(squeue -h -t all -j $1 -o %T 2>/dev/null); case \"$s\" in "
    "\"\"|PENDING|CONFIGURING|RUNNING|SUSPENDED|COMPLETING) sleep 0.1 ;; *) echo \"$s\"; return 0 ;; esac; done; "
    "echo \"NEVER_ENDED\"; return 1; }\n";

class SlurmDdpTest : public testing::SlurmTest {
 protected:
  // The README's line: srun alone, Slurm's variables giving the world and the rendezvous. The
  // same command each time (%j: the job id names the output file).
  static std::string submit() {
    const std::string srun = "srun " + shell_quote(PLUGTRAIN_EXE) + " run exp.toml --resume auto";
    return "env -u PLUGTRAIN_PLUGIN_PATH sbatch --parsable -n 2 -o out-%j.txt --wrap " + shell_quote(srun);
  }
  fs::path run_folder(int n) const { return dir() / "runs" / "srun" / ("version_" + std::to_string(n)); }
  std::string output(const std::string& job) const { return slurp(dir() / ("out-" + job + ".txt")); }
  // KEY=value from the scenario's output.
  static std::string value(const std::string& out, const std::string& key) {
    std::smatch m;
    return std::regex_search(out, m, std::regex(key + "=(\\S*)")) ? m[1].str() : "";
  }
};

// The epoch numbers of metrics.csv's epoch rows, in order ("epoch,<n>,...").
std::vector<int> csv_epochs(const std::string& csv) {
  std::vector<int> epochs;
  std::istringstream lines(csv);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("epoch,", 0) == 0) epochs.push_back(std::stoi(line.substr(6)));
  return epochs;
}

std::string short_hostname() {
  char name[256] = {};
  ::gethostname(name, sizeof name - 1);
  const std::string host = name;
  return host.substr(0, host.find('.'));  // Slurm's node name is `hostname -s` (local_slurm.sh)
}

TEST_F(SlurmDdpTest, SrunTrainsTwoRanksAndResumesAfterScancel) {
  kExperiment.write(dir() / "exp.toml");
  const std::string epoch_2 = "^epoch 2/" + std::to_string(kEpochs);
  std::ofstream(dir() / "cancelled.sh") << kWaitFunctions + "J=$(" + submit() + ") || exit 1; echo \"JOB=$J\"\n" +
                                               "wait_for '" + epoch_2 + "' out-$J.txt; scancel $J\n" +
                                               "echo \"STATE=$(ended $J)\"\n";
  const testing::ProcessResult cancelled = slurm("sh cancelled.sh");
  const std::string job = value(cancelled.out, "JOB");
  ASSERT_FALSE(job.empty()) << cancelled.out;
  const std::string first = output(job);
  ASSERT_EQ(value(cancelled.out, "STATE"), "CANCELLED") << cancelled.out << first;
  // Slurm's world and rendezvous, from its variables alone: the node's address as Slurm knows it
  // (local_slurm.sh's NodeAddr), the port of this job, and the interface that carries it.
  const std::string rendezvous =
      "127.0.0.1:" + std::to_string(15000 + std::stol(job) % 17000) + ", " + short_hostname() + "'s NodeAddr over lo";
  EXPECT_NE(first.find("ddp: 2 processes (slurm, rendezvous " + rendezvous + ")"), std::string::npos) << first;
  ASSERT_EQ(first.find("epoch " + std::to_string(kEpochs) + "/"), std::string::npos) << "cancelled too late: " << first;
  // scancel sends SIGTERM to every task (KillWait = 10 s before SIGKILL): the ranks agree to stop
  // and rank 0 writes its checkpoint.
  EXPECT_NE(first.find("interrupted (SIGTERM received): checkpoint runs/srun/version_0/checkpoints/last.ckpt"),
            std::string::npos)
      << first;
  ASSERT_TRUE(fs::exists(run_folder(0) / "checkpoints" / "last.ckpt")) << first;

  std::ofstream(dir() / "again.sh") << kWaitFunctions + "J=$(" + submit() + ") || exit 1; echo \"JOB=$J\"\n" +
                                           "echo \"STATE=$(ended $J)\"\n";
  const testing::ProcessResult again = slurm("sh again.sh");
  const std::string second = output(value(again.out, "JOB"));
  ASSERT_EQ(value(again.out, "STATE"), "COMPLETED") << again.out << second;
  EXPECT_NE(second.find("ddp: 2 processes (slurm, rendezvous "), std::string::npos) << second;
  EXPECT_NE(second.find("resumed from runs/srun/version_0/checkpoints/last.ckpt"), std::string::npos) << second;
  EXPECT_NE(second.find("done: final test accuracy"), std::string::npos) << second;

  EXPECT_FALSE(fs::exists(run_folder(1))) << "one run, continued";
  const auto summary = nlohmann::json::parse(slurp(run_folder(0) / "summary.json"));
  EXPECT_EQ(summary["interrupted"], false);
  EXPECT_EQ(summary["world_size"], 2);
  ASSERT_EQ(summary["epochs"].size(), std::size_t(kEpochs)) << summary.dump(1);
  for (int i = 0; i < kEpochs; ++i) EXPECT_EQ(summary["epochs"][i]["epoch"], i + 1);
  std::vector<int> every(kEpochs);
  for (int i = 0; i < kEpochs; ++i) every[i] = i + 1;
  EXPECT_EQ(csv_epochs(slurp(run_folder(0) / "metrics.csv")), every) << "each epoch's row once";
}

}  // namespace slurm_test
}  // namespace plugtrain
