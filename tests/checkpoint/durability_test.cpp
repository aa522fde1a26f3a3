// Runs that meet other processes, kills and broken folders: a run folder is used by one run at a
// time, a closed terminal (SIGHUP) stops with a checkpoint, what a killed writer left behind is
// cleaned, and a checkpoint folder that cannot be written is found before training starts.
// ctest-label: slow
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/experiment_folder.h"
#include "support/experiment_toml.h"
#include "support/faults.h"
#include "support/run_process.h"

namespace plugtrain {
namespace durability_test {

using testing::run_process;
using testing::shell_quote;
using testing::slurp;
namespace fs = std::filesystem;

// 100 steps an epoch (2000 samples, batches of 20), Adam (the default), one epoch.
const testing::ExperimentToml kExperiment = testing::ExperimentToml::synthetic("durable")
                                                .unset("experiment.seed")
                                                .set("model.hidden", {16})
                                                .unset("data.synthetic_classes")
                                                .set("data.synthetic_train_size", 2000)
                                                .set("data.synthetic_test_size", 100)
                                                .set("data.batch_size", 20)
                                                .unset("optim")
                                                .set("train.epochs", 1);

class DurabilityTest : public testing::ExperimentFolderTest {
 protected:
  DurabilityTest() : ExperimentFolderTest("durable", kExperiment.text()) {}
  // `plugtrain run exp.toml args`, as a shell command.
  std::string command(const std::string& args) const { return ExperimentFolderTest::command("run exp.toml " + args); }
  // Starts a run in the background; returns its pid once `line` appears in its output.
  int start(const std::string& args, const fs::path& log, const std::string& line) {
    const int pid =
        std::stoi(run_process(command(args) + " > " + shell_quote(log.string()) + " 2>&1 & echo $!", false).out);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (slurp(log).find(line) == std::string::npos && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return pid;
  }
  static void wait_for_exit(int pid) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (::kill(pid, 0) == 0 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
};

TEST_F(DurabilityTest, OneRunAtATimeInARunFolderAndSighupStopsWithACheckpoint) {
  ASSERT_EQ(run_process(command("")).exit_code, 0);
  const fs::path checkpoints = dir_ / "runs" / "durable" / "version_0" / "checkpoints";
  // What a writer killed during its rename leaves behind.
  std::ofstream(checkpoints / "last.ckpt.tmp-99999") << "half a checkpoint";

  const fs::path log = dir_ / "first.log";
  const int pid = start("--resume last --set train.epochs=100000 --set train.log_interval=10", log, "  epoch 2 step");
  EXPECT_FALSE(fs::exists(checkpoints / "last.ckpt.tmp-99999")) << "stale temporary files are removed";

  auto second = run_process(command("--resume last --set train.epochs=100000"));
  EXPECT_NE(second.exit_code, 0) << second.out;
  EXPECT_NE(second.out.find("another `plugtrain run` (pid " + std::to_string(pid) + ") is using "), std::string::npos)
      << second.out;

  ASSERT_EQ(::kill(pid, SIGHUP), 0);  // the terminal closed
  wait_for_exit(pid);
  EXPECT_NE(slurp(log).find("interrupted (SIGHUP received): checkpoint"), std::string::npos) << slurp(log);
  // The lock died with its holder: the run continues, for two more epochs than it finished
  // before the signal (however fast this machine trained them).
  int finished = 0;
  const std::string first_log = slurp(log);
  const std::regex epoch_line("\\nepoch ([0-9]+)/100000 ");
  for (auto it = std::sregex_iterator(first_log.begin(), first_log.end(), epoch_line); it != std::sregex_iterator();
       ++it)
    finished = std::max(finished, std::stoi((*it)[1]));
  auto third = run_process(command("--resume last --set train.epochs=" + std::to_string(finished + 2)));
  EXPECT_EQ(third.exit_code, 0) << third.out;
}

TEST_F(DurabilityTest, ACheckpointFolderThatCannotBeWrittenIsFoundBeforeTraining) {
  auto r = run_process(command("--set checkpoint.folder=\\\"/proc/plugtrain-checkpoints\\\""));
  EXPECT_NE(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("/proc/plugtrain-checkpoints: cannot create the checkpoint folder"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("epoch 1/"), std::string::npos) << "nothing trained: " << r.out;
}

// One byte flipped in the middle of the file (inside a tensor's bytes): resume and export refuse
// it, naming the file and the damaged record; the untouched checkpoint still resumes.
TEST_F(DurabilityTest, ACorruptCheckpointIsRefusedNeverResumed) {
  ASSERT_EQ(run_process(command("")).exit_code, 0);
  const fs::path ckpt = dir_ / "runs" / "durable" / "version_0" / "checkpoints" / "last.ckpt";
  fs::copy_file(ckpt, dir_ / "good.ckpt");
  std::string bytes = slurp(ckpt);
  bytes[bytes.size() / 2] ^= 0x10;
  std::ofstream(ckpt, std::ios::binary | std::ios::trunc) << bytes;

  auto resumed = run_process(command("--resume last --set train.epochs=2"));
  EXPECT_NE(resumed.exit_code, 0) << resumed.out;
  EXPECT_NE(resumed.out.find("last.ckpt: not a readable checkpoint (corrupt or truncated?): record 'archive/data/"),
            std::string::npos)
      << resumed.out;
  EXPECT_NE(resumed.out.find("' does not match its CRC-32"), std::string::npos) << resumed.out;
  EXPECT_EQ(resumed.out.find("epoch 2/2"), std::string::npos) << resumed.out;
  auto exported = run_process("cd " + shell_quote(dir_.string()) + " && " + shell_quote(PLUGTRAIN_EXE) + " export " +
                              shell_quote(ckpt.string()) + " out.pt");
  EXPECT_NE(exported.exit_code, 0) << exported.out;
  EXPECT_NE(exported.out.find("does not match its CRC-32"), std::string::npos) << exported.out;
  EXPECT_FALSE(fs::exists(dir_ / "out.pt"));

  auto truncated_bytes = slurp(dir_ / "good.ckpt");
  std::ofstream(ckpt, std::ios::binary | std::ios::trunc) << truncated_bytes.substr(0, truncated_bytes.size() - 100);
  auto truncated = run_process(command("--resume last --set train.epochs=2"));
  EXPECT_NE(truncated.exit_code, 0) << truncated.out;
  EXPECT_NE(truncated.out.find("last.ckpt: not a readable checkpoint (corrupt or truncated?)"), std::string::npos)
      << truncated.out;

  fs::copy_file(dir_ / "good.ckpt", ckpt, fs::copy_options::overwrite_existing);
  EXPECT_EQ(run_process(command("--resume last --set train.epochs=2")).exit_code, 0);
}

// The rows of metrics.csv of one kind ("epoch" or "step"), in order.
std::vector<std::string> rows(const std::string& csv, const std::string& kind) {
  std::vector<std::string> out;
  std::istringstream lines(csv);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind(kind + ",", 0) == 0) out.push_back(line);
  return out;
}

TEST_F(DurabilityTest, SummaryAndMetricsHoldEveryEpochOnceAcrossResumes) {
  ASSERT_EQ(run_process(command("--set train.epochs=2 --set checkpoint.save=\\\"every\\\"")).exit_code, 0);
  const fs::path run = dir_ / "runs" / "durable" / "version_0";
  // As if killed after epoch 2's rows but before its checkpoint: resume from epoch 1's.
  auto resumed = run_process(command("--resume " + shell_quote((run / "checkpoints" / "epoch-0001.ckpt").string()) +
                                     " --set train.epochs=3 --set checkpoint.save=\\\"every\\\""));
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out;
  const std::vector<std::string> epochs = rows(slurp(run / "metrics.csv"), "epoch");
  ASSERT_EQ(epochs.size(), 3u) << slurp(run / "metrics.csv");
  for (int i = 0; i < 3; ++i) EXPECT_EQ(epochs[i].rfind("epoch," + std::to_string(i + 1) + ",", 0), 0u) << epochs[i];
  EXPECT_EQ(rows(slurp(run / "metrics.csv"), "step").size(), 0u);

  const auto summary = nlohmann::json::parse(std::ifstream(run / "summary.json"));
  ASSERT_EQ(summary["epochs"].size(), 3u) << "epochs before the resume are listed too";
  for (int i = 0; i < 3; ++i) EXPECT_EQ(summary["epochs"][i]["epoch"], i + 1);
  EXPECT_EQ(summary["epochs"][0]["samples"], 2000);
}

// Killed after the last checkpoint but before summary.json (or a torchrun restart after the
// end): --resume auto finishes at once with the summary; --resume last says there is nothing.
TEST_F(DurabilityTest, ResumeAutoOfARunThatTrainedEveryEpochEndsWithItsSummary) {
  ASSERT_EQ(run_process(command("--set train.epochs=2")).exit_code, 0);
  const fs::path run = dir_ / "runs" / "durable" / "version_0";
  const auto before = nlohmann::json::parse(std::ifstream(run / "summary.json"));
  fs::remove(run / "summary.json");

  auto last = run_process(command("--set train.epochs=2 --resume last"));
  EXPECT_EQ(last.exit_code, 1) << last.out;
  EXPECT_NE(last.out.find("that run already trained all 2 epochs"), std::string::npos) << last.out;

  auto again = run_process(command("--set train.epochs=2 --resume auto"));
  ASSERT_EQ(again.exit_code, 0) << again.out;
  const auto after = nlohmann::json::parse(std::ifstream(run / "summary.json"));
  EXPECT_EQ(after["epochs"], before["epochs"]);
  EXPECT_EQ(after["steps"], before["steps"]);
  EXPECT_EQ(after["final_test_accuracy"], before["final_test_accuracy"]);
  EXPECT_EQ(after["final_test_loss"], before["final_test_loss"]);
  EXPECT_FALSE(fs::exists(dir_ / "runs" / "durable" / "version_1"));
  // Once more: the summary it has is the one it keeps, byte for byte.
  const std::string kept = slurp(run / "summary.json");
  ASSERT_EQ(run_process(command("--set train.epochs=2 --resume auto")).exit_code, 0);
  EXPECT_EQ(slurp(run / "summary.json"), kept);
}

// A disk that fills up (a file size limit: every write past 256 KiB fails with EFBIG).
TEST_F(DurabilityTest, AWriteThatFailsStopsTheRunWithItsReasonAndLeavesNoHalfFile) {
  const std::string big_model = " --set model.hidden=[1024]";
  auto r = run_process(testing::faults::writes_fail_past(256).env + command(big_model));
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("last.ckpt: cannot write: File too large"), std::string::npos) << r.out;
  const fs::path checkpoints = dir_ / "runs" / "durable" / "version_0" / "checkpoints";
  EXPECT_FALSE(fs::exists(checkpoints / "last.ckpt"));
  for (const auto& entry : fs::directory_iterator(checkpoints)) ADD_FAILURE() << "left behind: " << entry.path();
  EXPECT_NE(slurp(dir_ / "runs" / "durable" / "version_0" / "metrics.csv").find("epoch,1,"), std::string::npos);
}

// faultnet's logits are nan at training step 150 (epoch 2 of 100-step epochs).
const std::string kNanAt150 = testing::faults::test_plugin("fault_models") +
                              " --set model.name=\\\"faultnet\\\" --set model.nan_at=150 --set train.epochs=3";

TEST_F(DurabilityTest, ANonFiniteLossStopsTheRunAtThatStepAndNamesTheLastGoodCheckpoint) {
  write_experiment(testing::ExperimentToml(kExperiment).unset("model.hidden").text());
  auto r = run_process(command(kNanAt150));
  EXPECT_EQ(r.exit_code, 1) << r.out;
  // On the host CPU every step's loss is read: it stops at step 150. On a GPU the loss is read
  // at the next logged step or the epoch's end (a read each step would wait for the device),
  // so it stops by a step of epoch 2 from 150 to 200 (100 steps an epoch).
  const std::regex stopped(R"(the loss is nan (at step 150|by step (1[5-9][0-9]|200)) \(epoch 2; lr 0\.001, )"
                           R"(precision fp32\): training stopped\. The last good checkpoint is )"
                           R"(runs/durable/version_0/checkpoints/last\.ckpt)");
  EXPECT_TRUE(std::regex_search(r.out, stopped)) << r.out;
  EXPECT_EQ(r.out.find("epoch 2/3"), std::string::npos) << "epoch 2 never ends: " << r.out;

  auto skipping = run_process(command(kNanAt150 + " --set train.on_nonfinite=\\\"skip_step\\\""));
  ASSERT_EQ(skipping.exit_code, 0) << skipping.out;
  const auto summary = nlohmann::json::parse(std::ifstream(dir_ / "runs" / "durable" / "version_1" / "summary.json"));
  EXPECT_EQ(summary["nonfinite_skipped_steps"], 1);
  EXPECT_EQ(summary["epochs"][1]["samples"], 2000 - 20) << "the skipped batch is not counted";
  EXPECT_TRUE(std::isfinite(summary["final_test_loss"].get<double>()));

  // Accumulated: the step holding the nan micro-batch is skipped, and neither of its two
  // micro-batches counts.
  auto grouped =
      run_process(command(kNanAt150 + " --set train.on_nonfinite=\\\"skip_step\\\" --set train.accumulate_steps=2"));
  ASSERT_EQ(grouped.exit_code, 0) << grouped.out;
  const auto in_groups = nlohmann::json::parse(std::ifstream(dir_ / "runs" / "durable" / "version_2" / "summary.json"));
  EXPECT_EQ(in_groups["nonfinite_skipped_steps"], 1);
  EXPECT_EQ(in_groups["epochs"][1]["samples"], 2000 - 2 * 20) << "the skipped step's micro-batches are not counted";
}

}  // namespace durability_test
}  // namespace plugtrain
