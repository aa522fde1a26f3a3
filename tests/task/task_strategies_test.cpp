// Every task under what the loop does besides one plain step, as a user runs it: ddp over two
// processes and dp over two replicas give the weights and the task's test figures of one process
// at the same global batch (so each metric's statistics add up over ranks and replicas exactly);
// bf16 autocast, an out-of-memory error's halved batches and the "auto" batch search train the
// other tasks as they train classification. Synthetic data made for each task (data/dataset.h),
// on the CPU, named: these are the CPU's figures on a GPU machine too.
// ctest-label: e2e
#include <filesystem>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/experiment_folder.h"
#include "support/experiment_toml.h"
#include "support/exported_weights.h"
#include "support/faults.h"
#include "support/run_folder.h"
#include "support/run_process.h"

namespace plugtrain {
namespace task_strategies_test {

using testing::shell_quote;
using testing::slurp;
namespace fs = std::filesystem;

// No dropout and no batch norm (mlp), no augmentation: only then is 2 x 30 the computation of 1 x 60.
// A test with another model replaces the [model] table.
testing::ExperimentToml experiment(const std::string& task) {
  return testing::ExperimentToml::synthetic("tasks")
      .on_cpu()
      .set("model.dropout", 0.0)
      .set("task.name", task)
      .set("data.synthetic_classes", 5)
      .set("data.synthetic_train_size", 1200)
      .set("data.synthetic_test_size", 300)
      .set("data.batch_size", 60)
      .set("data.test_batch_size", 100)
      .unset("optim")
      .set("optim.name", "adam")
      .set("optim.lr", 0.003);
}

class TaskStrategyTest : public testing::ExperimentFolderTest {
 protected:
  TaskStrategyTest() : ExperimentFolderTest("task_strategy", "") {}

  testing::ProcessResult run(const std::string& args) {
    return testing::run_process("sh -c " + shell_quote(command("run exp.toml --no-cache " + args)));
  }
  fs::path version(int n) const { return testing::run_folder(dir_, "tasks", n); }
  nlohmann::json summary(int n) const { return testing::run_summary(dir_, "tasks", n); }
  std::map<std::string, at::Tensor> weights(int n) const {
    return testing::exported_weights(version(n) / "checkpoints" / "last.ckpt",
                                     dir_ / ("weights-" + std::to_string(n) + ".pt"));
  }
  // Runs 0 and 1 end with the same weights and the same test figures of the task.
  void expect_same_run(const std::vector<std::string>& metrics, const std::string& what) {
    testing::expect_same_weights(weights(0), weights(1), what);
    const nlohmann::json one = summary(0), other = summary(1);
    EXPECT_EQ(other["steps"], one["steps"]) << what;
    for (const std::string& m : metrics)
      EXPECT_NEAR(other["final_test"][m].get<double>(), one["final_test"][m].get<double>(), 1e-4)
          << what << ": test " << m;
  }
};

TEST_F(TaskStrategyTest, RegressionOverTwoDdpProcessesGivesTheWeightsAndErrorsOfOne) {
  write_experiment(experiment("regression").text());
  const testing::ProcessResult one = run("");
  ASSERT_EQ(one.exit_code, 0) << one.out;
  const testing::ProcessResult two = run("--set backend.devices=2 --set data.global_batch_size=60");
  ASSERT_EQ(two.exit_code, 0) << two.out;
  EXPECT_EQ(summary(1)["strategy"], "ddp");
  EXPECT_EQ(summary(1)["world_size"], 2);
  expect_same_run({"mae", "rmse", "r2"}, "regression, 2 processes x 30 vs 1 x 60");
  EXPECT_LT(summary(1)["final_test_mae"].get<double>(), 0.15) << "a constant guess is 0.25 off on average";
}

TEST_F(TaskStrategyTest, MultilabelOverTwoDpReplicasGivesTheWeightsAndPrecisionOfOne) {
  write_experiment(experiment("multilabel").text());
  const testing::ProcessResult one = run("");
  ASSERT_EQ(one.exit_code, 0) << one.out;
  const testing::ProcessResult dp =
      run("--set backend.devices=2 --set backend.strategy=\\\"dp\\\" --set data.global_batch_size=60");
  ASSERT_EQ(dp.exit_code, 0) << dp.out;
  EXPECT_EQ(summary(1)["plan"]["strategy"], "dp");
  EXPECT_EQ(summary(1)["plan"]["devices"].size(), 2u);
  expect_same_run({"map", "f1"}, "multilabel, dp 2 x 30 vs 1 x 60");
  EXPECT_GT(summary(1)["final_test_map"].get<double>(), 0.8) << "chance is about 0.36";
}

// Models with batch norm see another batch per rank, so ddp is not one process's computation
// (the regression test above shows the figures adding up exactly): the CRNN learns under it.
TEST_F(TaskStrategyTest, SequenceRecognitionTrainsUnderDdp) {
  write_experiment(experiment("sequence")
                       .unset("model")
                       .set("model.name", "crnn")
                       .set("model.channels", {16, 32})
                       .set("model.hidden", 32)
                       .text());
  const testing::ProcessResult r =
      run("--set backend.devices=2 --set data.synthetic_shape=[1,8,48] --set train.epochs=6 "
          "--set optim.lr=0.005 --set data.synthetic_train_size=2400");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json s = summary(0);
  EXPECT_EQ(s["strategy"], "ddp");
  EXPECT_EQ(s["world_size"], 2);
  EXPECT_LT(s["final_test_cer"].get<double>(), 0.2) << "chance: most of every sequence wrong";
}

TEST_F(TaskStrategyTest, SegmentationTrainsInBf16) {
  write_experiment(experiment("segmentation")
                       .unset("model")
                       .set("model.name", "unet")
                       .set("model.width", 8)
                       .set("model.depth", 1)
                       .text());
  const testing::ProcessResult r = run("--set train.precision=\\\"bf16\\\" --set train.epochs=4");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(summary(0)["precision"], "bf16");
  EXPECT_GT(summary(0)["final_test_miou"].get<double>(), 0.5) << "6 pixel classes: a constant guess is about 1/6";
}

// faultnet (a test model) runs out of memory above 20 samples from step 3: the step is retried
// with halved batches, and every sample still trains once per epoch with the task's loss.
TEST_F(TaskStrategyTest, MultilabelRecoversFromOutOfMemoryByHalvingTheBatch) {
  write_experiment(experiment("multilabel")
                       .unset("model")
                       .set("model.name", "faultnet")
                       .set("model.max_batch", 20)
                       .set("model.from_call", 3)
                       .text());
  const testing::ProcessResult r = run(testing::faults::test_plugin("fault_models"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json s = summary(0);
  ASSERT_FALSE(s["batch_halvings"].empty()) << s.dump();
  EXPECT_EQ(s["batch_halvings"][0]["epoch"], 1) << s["batch_halvings"].dump();
  EXPECT_EQ(s["batch_halvings"][0]["step"], 3) << s["batch_halvings"].dump();
  EXPECT_EQ(s["batch_halvings"][0]["from"], 60) << s["batch_halvings"].dump();
  EXPECT_EQ(s["step_batch"], 15);
  for (const auto& epoch : s["epochs"]) EXPECT_EQ(epoch["samples"], 1200) << "no sample lost or trained twice";
  EXPECT_GT(s["final_test_map"].get<double>(), 0.6) << "chance is about 0.36";
}

TEST_F(TaskStrategyTest, TheAutoBatchSearchRunsTheTasksLoss) {
  write_experiment(experiment("regression").set("task.loss", "l1").text());
  const testing::ProcessResult r = run("--set data.batch_size=\\\"auto\\\" --set data.max_batch_size=128");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(summary(0)["plan"]["batch"]["per_device"], 128) << summary(0)["plan"].dump();
  EXPECT_LT(summary(0)["final_test_mae"].get<double>(), 0.2) << r.out;
}

}  // namespace task_strategies_test
}  // namespace plugtrain
