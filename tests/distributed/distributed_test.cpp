// Multi-device training as a user runs it: ddp over c10d Gloo with `devices = 2`, the launcher
// variables set by hand, the real torchrun of the torch wheel, and ranks that die or hang; and
// dp, the model replicated in one process.
// ctest-label: slow
// ctest-label World: unit
#include <signal.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include "distributed/launcher.h"
#include "distributed/world.h"
#include "support/experiment_toml.h"
#include "support/exported_weights.h"
#include "support/run_folder.h"
#include "support/run_process.h"

namespace plugtrain {
namespace distributed_test {

using ::testing::AllOf;
using ::testing::HasSubstr;
using testing::run_process;
using testing::shell_quote;
using testing::slurp;
namespace fs = std::filesystem;

// No dropout and no augmentation: those draw per rank, so only without them is 2 x 30 the
// same computation as 1 x 60. The CPU, named: these are Gloo's figures on a GPU machine too.
const testing::ExperimentToml kExperiment = testing::ExperimentToml::synthetic("ddp")
                                                .set("experiment.seed", 11)
                                                .on_cpu()
                                                .set("model.dropout", 0.0)
                                                .unset("data.synthetic_classes")
                                                .set("data.synthetic_train_size", 1200)
                                                .set("data.batch_size", 60)
                                                .set("optim.lr", 0.05)
                                                .set("train.epochs", 2);

class DistributedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::scratch_dir("ddp");
    kExperiment.write(dir_ / "exp.toml");
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string exe() const { return "env -u PLUGTRAIN_PLUGIN_PATH " + shell_quote(PLUGTRAIN_EXE); }
  std::string in_dir(const std::string& command) const {
    return "cd " + shell_quote(dir_.string()) + " && { " + command + "; }";
  }
  testing::ProcessResult run(const std::string& args) { return run_process(in_dir(exe() + " run exp.toml " + args)); }
  fs::path version(int n) const { return testing::run_folder(dir_, "ddp", n); }
  int versions() const {
    int n = 0;
    if (fs::exists(dir_ / "runs" / "ddp"))
      for (const auto& entry : fs::directory_iterator(dir_ / "runs" / "ddp")) n += entry.is_directory();
    return n;
  }
  nlohmann::json summary(int n) const { return testing::run_summary(dir_, "ddp", n); }

  // A run's final weights, name -> tensor, read from `plugtrain export`.
  std::map<std::string, at::Tensor> weights(int n) {
    return testing::exported_weights(version(n) / "checkpoints" / "last.ckpt",
                                     dir_ / ("weights-" + std::to_string(n) + ".pt"));
  }
  void expect_same_weights(int a, int b, const std::string& what) {
    testing::expect_same_weights(weights(a), weights(b), what);
  }

  // Shell functions for the scenarios: wait_for PATTERN FILE waits (up to 120 s) for a line;
  // bounded_wait PID waits (up to 120 s) for a child process and returns its exit code, or
  // prints STILL_RUNNING and kills it. Generous bounds: a loaded machine is slow, a hang is
  // still caught. (The watchdog's sleep writes nowhere, so it holds no test output open.)
  static std::string wait_functions() {
    return "wait_for() { for i in $(seq 1200); do grep -q \"$1\" \"$2\" && return 0; sleep 0.1; done; "
           "echo \"NEVER SAW $1\"; }\n"
           "bounded_wait() { ( sleep 120 >/dev/null 2>&1; echo STILL_RUNNING; kill -KILL $1 ) & W=$!; "
           "wait $1; R=$?; kill $W 2>/dev/null; return $R; }\n";
  }

  // Starts `plugtrain run` with devices = 2 in the background, waits until both ranks train
  // (the first epoch's line), runs `action` (shell, with $R0/$R1 the ranks' pids and $L the
  // launcher's) and waits for the launcher. Prints EXIT=<code> and the ranks left running.
  testing::ProcessResult run_and_then(const std::string& args, const std::string& action) {
    const std::string script = wait_functions() + exe() +
                               " run exp.toml --set backend.devices=2 --set train.epochs=100000 " + args +
                               " > out.txt 2>&1 & L=$!\n"
                               "wait_for '^epoch 1/' out.txt\n"
                               "R0=$(grep -o 'rank 0 pid [0-9]*' out.txt | awk '{print $4}'); "
                               "R1=$(grep -o 'rank 1 pid [0-9]*' out.txt | awk '{print $4}')\n" +
                               action +
                               "\n"
                               "bounded_wait $L; echo \"EXIT=$? (the launcher's exit code)\"; cat out.txt\n"
                               "for p in $R0 $R1; do kill -0 $p 2>/dev/null && echo \"ORPHAN $p\"; done; true";
    std::ofstream(dir_ / "scenario.sh") << script;
    return run_process(in_dir("sh scenario.sh"));
  }

  fs::path dir_;
};

TEST_F(DistributedTest, TwoProcessesGiveTheWeightsOfOneWithTheSameGlobalBatch) {
  auto one = run("");
  ASSERT_EQ(one.exit_code, 0) << one.out;
  auto two = run("--set backend.devices=2 --set data.global_batch_size=60");
  ASSERT_EQ(two.exit_code, 0) << two.out;
  EXPECT_EQ(versions(), 2) << "rank 1 must not create a run folder of its own";
  EXPECT_EQ(summary(1)["strategy"], "ddp");
  EXPECT_EQ(summary(1)["world_size"], 2);
  const nlohmann::json plan = summary(1)["plan"];
  EXPECT_EQ(plan["strategy"], "ddp") << plan;
  EXPECT_EQ(plan["world_size"], 2) << plan;
  EXPECT_EQ(plan["world_source"], "plugtrain") << plan;
  EXPECT_EQ(plan["batch"],
            nlohmann::json({{"per_device", 30}, {"devices", 2}, {"global", 60}, {"lr", 0.05}, {"lr_factor", 1.0}}));
  EXPECT_EQ(summary(1)["steps"], summary(0)["steps"]);
  EXPECT_NEAR(summary(1)["final_test_loss"].get<double>(), summary(0)["final_test_loss"].get<double>(), 1e-4);
  expect_same_weights(0, 1, "2 processes x 30 vs 1 x 60");
}

TEST_F(DistributedTest, DpOverTwoReplicasGivesTheWeightsOfOneWithTheSameGlobalBatch) {
  auto one = run("");
  ASSERT_EQ(one.exit_code, 0) << one.out;
  auto dp = run("--set backend.devices=2 --set backend.strategy=\"dp\" --set data.global_batch_size=60");
  ASSERT_EQ(dp.exit_code, 0) << dp.out;
  EXPECT_THAT(dp.out, HasSubstr("warning: strategy dp on the CPU runs 2 model replicas in one process"));
  const nlohmann::json plan = summary(1)["plan"];
  EXPECT_EQ(plan["strategy"], "dp") << plan;
  EXPECT_EQ(plan["world_size"], 1) << "dp must not start processes: " << plan;
  EXPECT_EQ(plan["devices"], nlohmann::json({"cpu", "cpu"})) << plan;
  EXPECT_EQ(plan["batch"]["per_device"], 30) << plan;
  EXPECT_EQ(plan["batch"]["devices"], 2) << plan;
  EXPECT_EQ(plan["batch"]["global"], 60) << plan;
  EXPECT_EQ(summary(1)["world_size"], 1);
  EXPECT_EQ(summary(1)["steps"], summary(0)["steps"]);
  EXPECT_NEAR(summary(1)["final_test_loss"].get<double>(), summary(0)["final_test_loss"].get<double>(), 1e-4);
  expect_same_weights(0, 1, "dp 2 x 30 vs 1 x 60");
  // Its checkpoint is the plain model: it resumes in one process at the same global batch.
  auto resumed = run("--set train.epochs=3 --resume last");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out;
  EXPECT_EQ(summary(1)["resumed_from"]["epochs_done"], 2) << resumed.out;
  EXPECT_EQ(summary(1)["epochs"].size(), 3u) << resumed.out;
}

// Two micro-batches of 15 per rank on two ranks (the all-reduce only in the second's backward),
// and the same on dp's two replicas, give the weights of one process stepping on 60.
TEST_F(DistributedTest, AccumulatedStepsOverTwoDevicesGiveTheWeightsOfOneBatch) {
  auto one = run("");
  ASSERT_EQ(one.exit_code, 0) << one.out;
  auto ddp = run("--set backend.devices=2 --set data.global_batch_size=30 --set train.accumulate_steps=2");
  ASSERT_EQ(ddp.exit_code, 0) << ddp.out;
  EXPECT_NE(ddp.out.find("batch: 30 per micro-batch x 2 accumulated = effective batch 60 per optimizer step"),
            std::string::npos)
      << ddp.out;
  EXPECT_EQ(summary(1)["steps"], summary(0)["steps"]);
  expect_same_weights(0, 1, "ddp 2 ranks x 2 micro-batches x 15 vs 1 x 60");
  auto dp =
      run("--set backend.devices=2 --set backend.strategy=\"dp\" --set data.global_batch_size=30 "
          "--set train.accumulate_steps=2");
  ASSERT_EQ(dp.exit_code, 0) << dp.out;
  expect_same_weights(0, 2, "dp 2 replicas x 2 micro-batches x 15 vs 1 x 60");
}

TEST_F(DistributedTest, DefaultGlobalBatchIsBatchPerDeviceTimesDevicesWithLrScaling) {
  auto r = run("--set backend.devices=2 --set optim.lr_scaling=\"sqrt\" --set train.epochs=1");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json batch = summary(0)["plan"]["batch"];
  EXPECT_EQ(batch["per_device"], 60) << batch;
  EXPECT_EQ(batch["devices"], 2) << batch;
  EXPECT_EQ(batch["global"], 120) << batch;
  EXPECT_DOUBLE_EQ(batch["lr_factor"].get<double>(), std::sqrt(2.0)) << batch;
  EXPECT_DOUBLE_EQ(batch["lr"].get<double>(), 0.05 * std::sqrt(2.0)) << batch;
  EXPECT_EQ(summary(0)["steps"], 10);  // 1200 samples / 120
}

TEST_F(DistributedTest, ADdpCheckpointResumesInOneProcessOnlyAtTheSameGlobalBatch) {
  auto ddp = run("--set backend.devices=2 --set train.epochs=1");
  ASSERT_EQ(ddp.exit_code, 0) << ddp.out;
  auto other = run("--resume last");  // one process: global batch 60, not 120
  EXPECT_EQ(other.exit_code, 1) << other.out;
  EXPECT_NE(other.out.find("data.global_batch_size 120 -> 60"), std::string::npos) << other.out;
  auto same = run("--set data.global_batch_size=120 --resume last");
  ASSERT_EQ(same.exit_code, 0) << same.out;
  EXPECT_EQ(summary(0)["resumed_from"]["epochs_done"], 1) << same.out;
  EXPECT_EQ(summary(0)["world_size"], 1);
  EXPECT_EQ(summary(0)["steps"], 20);  // 2 epochs of 1200 / 120
}

TEST_F(DistributedTest, LauncherVariablesSetByHandWork) {
  const int port = free_local_port();
  auto vars = [&](int rank) {
    return "RANK=" + std::to_string(rank) + " WORLD_SIZE=2 LOCAL_RANK=" + std::to_string(rank) +
           " LOCAL_WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=" + std::to_string(port) + " ";
  };
  auto r = run_process(in_dir(vars(1) + exe() + " run exp.toml > rank1.txt 2>&1 & P=$!; " + vars(0) + exe() +
                              " run exp.toml > rank0.txt 2>&1; A=$?; wait $P; echo \"EXIT=$A,$?\""));
  EXPECT_NE(r.out.find("EXIT=0,0"), std::string::npos)
      << r.out << slurp(dir_ / "rank0.txt") << slurp(dir_ / "rank1.txt");
  EXPECT_EQ(slurp(dir_ / "rank1.txt"), "") << "only rank 0 prints";
  EXPECT_EQ(versions(), 1);
  EXPECT_EQ(summary(0)["strategy"], "ddp");
  EXPECT_EQ(summary(0)["world_size"], 2);
  EXPECT_EQ(summary(0)["plan"]["world_source"], "launcher variables");
}

#ifdef PLUGTRAIN_PYTHON
TEST_F(DistributedTest, RunsUnderTheTorchrunOfTheTorchWheel) {
  const fs::path torchrun = fs::path(PLUGTRAIN_PYTHON).parent_path() / "torchrun";
  ASSERT_TRUE(fs::exists(torchrun)) << torchrun;
  ASSERT_EQ(run("--set backend.devices=2").exit_code, 0);  // version_0: plugtrain's own launcher
  auto r = run_process(in_dir("env -u PLUGTRAIN_PLUGIN_PATH " + shell_quote(torchrun.string()) +
                              " --no-python --nproc-per-node 2 --master-port " + std::to_string(free_local_port()) +
                              " " + shell_quote(PLUGTRAIN_EXE) + " run exp.toml"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("torchrun's agent store"));
  EXPECT_EQ(versions(), 2);
  EXPECT_EQ(summary(1)["strategy"], "ddp");
  EXPECT_EQ(summary(1)["world_size"], 2);
  EXPECT_EQ(summary(1)["plan"]["world_source"], "torchrun");
  expect_same_weights(0, 1, "torchrun vs plugtrain's launcher");
}

// Two machines simulated on this one: two torchrun agents as nodes 0 and 1, rendezvous on
// 127.0.0.1, with exactly the command of the README's multi-node example. Node 1's worker is
// killed mid-run; node 0 names it and stops within the timeout, and the same two commands
// again finish the run from its last checkpoint with every epoch in summary.json.
TEST_F(DistributedTest, TwoNodesSurviveAKilledWorkerWithResumeAuto) {
  const fs::path torchrun = fs::path(PLUGTRAIN_PYTHON).parent_path() / "torchrun";
  const std::string node =
      "node() { exec env -u PLUGTRAIN_PLUGIN_PATH " + shell_quote(torchrun.string()) +
      " --no-python --nnodes 2 --node-rank $1 --nproc-per-node 1 --master-addr 127.0.0.1 --master-port " +
      std::to_string(free_local_port()) + " " + shell_quote(PLUGTRAIN_EXE) +
      " run exp.toml --resume auto --set train.epochs=60 --set distributed.timeout=10; }\n"
      "node 1 > node1.txt 2>&1 & A1=$!\n"
      "node 0 > node0.txt 2>&1 & A0=$!\n";
  std::ofstream(dir_ / "killed.sh")
      << wait_functions() + node +
             "wait_for '^epoch 3/60' node0.txt\n"
             "kill -KILL $(pgrep -P $A1)\n"
             "bounded_wait $A0; E0=$?; bounded_wait $A1; echo \"EXIT=$E0,$? (the agents' exit codes)\"\n";
  auto killed = run_process(in_dir("sh killed.sh"));
  const std::string node0 = slurp(dir_ / "node0.txt");
  EXPECT_NE(killed.out.find("EXIT=1,1 "), std::string::npos) << killed.out << node0;
  EXPECT_NE(node0.find("error: rank 0: training failed; rank 1 stopped answering"), std::string::npos) << node0;
  EXPECT_EQ(killed.out.find("STILL_RUNNING"), std::string::npos) << "an agent did not stop: " << killed.out;
  ASSERT_EQ(node0.find("epoch 60/60"), std::string::npos) << "killed before the end: " << node0;
  ASSERT_TRUE(fs::exists(version(0) / "checkpoints" / "last.ckpt")) << node0;

  std::ofstream(dir_ / "again.sh") << node + "wait $A0; E0=$?; wait $A1; echo \"EXIT=$E0,$?\"\n";
  auto again = run_process(in_dir("sh again.sh"));
  const std::string resumed = slurp(dir_ / "node0.txt");
  ASSERT_NE(again.out.find("EXIT=0,0"), std::string::npos) << again.out << resumed;
  EXPECT_NE(resumed.find("resumed from runs/ddp/version_0/checkpoints/last.ckpt"), std::string::npos) << resumed;
  const auto s = summary(0);
  EXPECT_EQ(s["world_size"], 2);
  EXPECT_EQ(s["plan"]["world_source"], "torchrun");
  ASSERT_EQ(s["epochs"].size(), 60u) << "every epoch, before and after the kill";
  for (int i = 0; i < 60; ++i) EXPECT_EQ(s["epochs"][i]["epoch"], i + 1);
  EXPECT_EQ(versions(), 1) << "one run, continued";
}
#endif

TEST_F(DistributedTest, ADeadRankIsNamedAndNoProcessIsLeftBehind) {
  auto r = run_and_then("", "kill -KILL $R1");
  EXPECT_NE(r.out.find("EXIT=137"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("rank 1 (pid "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("was killed by signal 9"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("rank 0: training failed; rank 1 stopped answering"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("ORPHAN"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("STILL_RUNNING"), std::string::npos) << "the launcher did not stop: " << r.out;
}

// --resume auto: the same command starts a run, and after a rank was killed continues it from
// its last checkpoint (what torchrun --max-restarts or a scheduler's requeue does).
TEST_F(DistributedTest, AKilledRankAndTheSameCommandAgainFinishTheRunWithNothingLost) {
  const std::string command = exe() + " run exp.toml --set backend.devices=2 --set train.epochs=12 --resume auto";
  const std::string script =
      wait_functions() + command +
      " > out.txt 2>&1 & L=$!\n"
      "wait_for '^epoch 3/12' out.txt\n"
      "kill -KILL $(grep -o 'rank 1 pid [0-9]*' out.txt | awk '{print $4}'); wait $L; echo \"EXIT=$?\"; cat out.txt";
  std::ofstream(dir_ / "scenario.sh") << script;
  auto killed = run_process(in_dir("sh scenario.sh"));
  ASSERT_EQ(killed.out.find("EXIT=0"), std::string::npos) << killed.out;
  ASSERT_EQ(killed.out.find("epoch 12/12"), std::string::npos) << "killed before the end: " << killed.out;

  auto again = run_process(in_dir(command));
  ASSERT_EQ(again.exit_code, 0) << again.out;
  EXPECT_NE(again.out.find("resumed from runs/ddp/version_0/checkpoints/last.ckpt"), std::string::npos) << again.out;
  EXPECT_NE(again.out.find("epoch 12/12"), std::string::npos) << again.out;
  const auto summary = nlohmann::json::parse(std::ifstream(dir_ / "runs" / "ddp" / "version_0" / "summary.json"));
  ASSERT_EQ(summary["epochs"].size(), 12u) << "every epoch, before and after the kill";
  for (int i = 0; i < 12; ++i) EXPECT_EQ(summary["epochs"][i]["epoch"], i + 1);
  EXPECT_FALSE(fs::exists(dir_ / "runs" / "ddp" / "version_1")) << "one run, continued";
}

TEST_F(DistributedTest, AHungRankIsNamedWithinTheTimeoutAndKilled) {
  auto r = run_and_then("--set distributed.timeout=3", "kill -STOP $R1");
  EXPECT_NE(r.out.find("EXIT=1 "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("rank 1 stopped answering (it died or hung"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("did not stop within 8 s; killing it"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("ORPHAN"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("STILL_RUNNING"), std::string::npos) << "the launcher did not stop: " << r.out;
}

TEST_F(DistributedTest, CtrlCStopsAllRanksAtTheSameStepWithACheckpoint) {
  auto r = run_and_then("", "kill -INT $L");
  EXPECT_NE(r.out.find("EXIT=130"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("error"), std::string::npos) << "an interrupt is not a failure: " << r.out;
  EXPECT_NE(r.out.find("resume with: plugtrain run exp.toml --resume last"), std::string::npos) << r.out;
  EXPECT_TRUE(fs::exists(version(0) / "checkpoints" / "last.ckpt"));
  EXPECT_EQ(r.out.find("ORPHAN"), std::string::npos) << r.out;
}

TEST_F(DistributedTest, BadSettingsAreRefusedBeforeAnyWorkerStarts) {
  auto uneven = run("--set backend.devices=3 --set data.global_batch_size=100");
  EXPECT_EQ(uneven.exit_code, 2) << uneven.out;
  EXPECT_NE(uneven.out.find("data.global_batch_size 100 does not split evenly over 3 devices"), std::string::npos)
      << uneven.out;
  EXPECT_EQ(uneven.out.find("started"), std::string::npos) << uneven.out;
  auto word = run("--set backend.devices=\"two\"");
  EXPECT_EQ(word.exit_code, 2);
  EXPECT_NE(word.out.find("backend.devices must be an integer or \"auto\", got string"), std::string::npos) << word.out;
  auto single = run("--set backend.devices=2 --set backend.strategy=\"single\" --set train.epochs=1");
  EXPECT_EQ(single.exit_code, 0) << single.out;
  EXPECT_THAT(single.out, HasSubstr("warning: strategy single trains in one process on cpu:0"));
  EXPECT_EQ(summary(versions() - 1)["strategy"], "single");
  EXPECT_EQ(summary(versions() - 1)["world_size"], 1);
}

// ---------------------------------------------------------------- launcher variables

TEST(World, NoLauncherVariablesMeansOneProcess) { EXPECT_FALSE(world_from_environment(Environment{}).has_value()); }

TEST(World, ReadsTorchrunVariablesAndTheAgentStore) {
  const auto w = world_from_environment({{"RANK", "3"},
                                         {"WORLD_SIZE", "4"},
                                         {"LOCAL_RANK", "1"},
                                         {"LOCAL_WORLD_SIZE", "2"},
                                         {"MASTER_ADDR", "node0"},
                                         {"MASTER_PORT", "29500"},
                                         {"TORCHELASTIC_RUN_ID", "x"},
                                         {"TORCHELASTIC_USE_AGENT_STORE", "True"},
                                         {"TORCHELASTIC_RESTART_COUNT", "2"}});
  ASSERT_TRUE(w);
  EXPECT_EQ(w->rank, 3);
  EXPECT_EQ(w->world_size, 4);
  EXPECT_EQ(w->local_rank, 1);
  EXPECT_EQ(w->local_world_size, 2);
  EXPECT_EQ(w->master_addr, "node0");
  EXPECT_EQ(w->master_port, 29500);
  EXPECT_TRUE(w->agent_store);
  EXPECT_EQ(w->restart_count, "2");
  EXPECT_EQ(w->source, "torchrun");
}

TEST(World, ReadsSlurmRanks) {
  const auto w = world_from_environment({{"SLURM_PROCID", "5"},
                                         {"SLURM_STEP_ID", "0"},
                                         {"SLURM_NTASKS", "8"},
                                         {"SLURM_LOCALID", "1"},
                                         {"SLURM_NTASKS_PER_NODE", "4"},
                                         {"MASTER_ADDR", "n1"},
                                         {"MASTER_PORT", "1234"}});
  ASSERT_TRUE(w);
  EXPECT_EQ(w->rank, 5);
  EXPECT_EQ(w->world_size, 8);
  EXPECT_EQ(w->local_rank, 1);
  EXPECT_EQ(w->local_world_size, 4);
  EXPECT_EQ(w->source, "slurm");
  EXPECT_FALSE(w->agent_store);
}

TEST(World, ASlurmBatchShellOrASingleTaskIsOneProcess) {
  // sbatch's own shell: SLURM_PROCID=0 but no job step (or the batch step's id).
  EXPECT_FALSE(world_from_environment({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "4"}}));
  EXPECT_FALSE(world_from_environment({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "4"}, {"SLURM_STEP_ID", "4294967294"}}));
  EXPECT_FALSE(world_from_environment({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "1"}, {"SLURM_STEP_ID", "0"}}));
  EXPECT_FALSE(world_from_environment({{"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "1"}}));
}

TEST(World, BadOrMissingVariablesAreNamed) {
  auto message = [](const Environment& env) {
    try {
      world_from_environment(env);
    } catch (const DistributedError& e) { return std::string(e.what()); }
    return std::string("no error");
  };
  const Environment good = {{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "1"}};
  auto with = [&](const std::string& k, const std::string& v) {
    Environment env = good;
    env[k] = v;
    return env;
  };
  EXPECT_EQ(message(with("RANK", "x")), "environment variable RANK='x' is not an integer >= 0");
  EXPECT_EQ(message(with("RANK", "2")), "environment variable RANK=2 is not below the world size 2");
  EXPECT_EQ(message(with("MASTER_PORT", "70000")), "environment variable MASTER_PORT='70000' is not a TCP port");
  Environment no_addr = good;
  no_addr.erase("MASTER_ADDR");
  EXPECT_NE(message(no_addr).find("environment variable MASTER_ADDR is not set"), std::string::npos);
  Environment no_size = good;
  no_size.erase("WORLD_SIZE");
  EXPECT_NE(message(no_size).find("environment variable WORLD_SIZE is not set"), std::string::npos);
}

}  // namespace distributed_test
}  // namespace plugtrain
