// A data set's own validation split (SDK 3.8) end to end with the executable: it chooses the
// model while a labelled test split waits for the end; without test labels (TinyImageNet's case)
// its figures are the final ones and the log says so; data.val_fraction takes over from it; and
// a test monitor, or a reader that fills no validation split, is one line.
// ctest-label: e2e
#include <algorithm>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/experiment_toml.h"
#include "support/run_folder.h"
#include "support/run_process.h"

namespace plugtrain {
namespace own_validation_test {

using testing::run_process;
using testing::shell_quote;
namespace fs = std::filesystem;

// An MLP on tests/test_plugins/split_datasets.cpp's data sets (400 training samples of 4 classes).
testing::ExperimentToml experiment(const std::string& dataset) {
  return testing::ExperimentToml::synthetic("own-val")
      .set("experiment.seed", 3)
      .set("plugins.paths", {std::string(PLUGTRAIN_TEST_PLUGIN_DIR) + "/split_datasets"})
      .unset("data")
      .set("data.dataset", dataset)
      .set("data.batch_size", 50)
      .set("train.epochs", 2);
}

class OwnValidationTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::scratch_dir("own-val"); }
  void TearDown() override { fs::remove_all(dir_); }

  testing::ProcessResult plugtrain(const std::string& args, bool merge_stderr = true) {
    return run_process(testing::plugtrain_command(args, "", dir_), merge_stderr);
  }
  void write(const std::string& dataset) { experiment(dataset).write(dir_ / "exp.toml"); }
  fs::path run_folder(int version) { return testing::run_folder(dir_, "own-val", version); }
  nlohmann::json summary(int version) { return testing::run_summary(dir_, "own-val", version); }
  fs::path dir_;
};

TEST_F(OwnValidationTest, TheDataSetsValSplitChoosesAndItsTestSplitWaitsForTheEnd) {
  write("three-splits");
  const testing::ProcessResult list =
      plugtrain("data --list --plugin-path " + shell_quote(std::string(PLUGTRAIN_TEST_PLUGIN_DIR) + "/split_datasets"));
  EXPECT_NE(
      list.out.find(
          "three-splits  (splitsets)  test data with its own validation split; targets: one class per sample; its own "
          "validation split"),
      std::string::npos)
      << list.out;

  const testing::ProcessResult r = plugtrain("run exp.toml");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("data: three splits, 400 training, 120 val and 80 test samples"), std::string::npos) << r.out;
  EXPECT_NE(
      r.out.find("data: validation split: the data set's own val split (120 samples): monitors, early stopping and "
                 "best checkpoints use val_ metrics; the test set is evaluated after the last epoch"),
      std::string::npos)
      << r.out;
  const nlohmann::json s = summary(0);
  EXPECT_EQ(s["selection_split"], "val");
  EXPECT_EQ(s["test_is_val"], false);
  ASSERT_EQ(s["epochs"].size(), 2u);
  EXPECT_TRUE(s["epochs"][0]["val_loss"].is_number()) << s.dump();
  EXPECT_TRUE(s["epochs"][0]["test_loss"].is_null()) << "no test figures before the end";
  EXPECT_GE(s["final_val_accuracy"].get<double>(), 0.9) << s.dump();  // 4 patterns: chance is 0.25
  EXPECT_GE(s["final_test_accuracy"].get<double>(), 0.9) << s.dump();

  // `evaluate --split val` reads the same split and reports the run's own figure.
  const testing::ProcessResult e =
      plugtrain("evaluate " + shell_quote(run_folder(0).string()) + " --split val --json", /*merge_stderr=*/false);
  ASSERT_EQ(e.exit_code, 0) << e.out;
  const nlohmann::json figures = nlohmann::json::parse(e.out);
  EXPECT_EQ(figures["samples"].get<int>(), 120);
  EXPECT_NEAR(figures["metrics"]["accuracy"].get<double>(), s["final_val_accuracy"].get<double>(), 1e-9);

  // train.test_every tests along the way; data.test_subset cuts the test split, never val.
  const testing::ProcessResult every = plugtrain("run exp.toml --set train.test_every=1 --set data.test_subset=40");
  ASSERT_EQ(every.exit_code, 0) << every.out;
  EXPECT_NE(every.out.find("400 training, 120 val and 40 test samples"), std::string::npos) << every.out;
  EXPECT_NE(every.out.find("the test set is evaluated every epoch and after the last epoch"), std::string::npos)
      << every.out;
  EXPECT_TRUE(summary(1)["epochs"][0]["test_loss"].is_number()) << summary(1).dump();

  // data.val_fraction holds out its own split instead, and says the data set's val is unused.
  const testing::ProcessResult held = plugtrain("run exp.toml --set data.val_fraction=0.25");
  ASSERT_EQ(held.exit_code, 0) << held.out;
  EXPECT_NE(held.out.find("data: validation split of 100 samples held out of the training set"), std::string::npos)
      << held.out;
  EXPECT_NE(held.out.find("the data set's own val split (120 samples) is not used"), std::string::npos) << held.out;
  EXPECT_NE(held.out.find("300 training and 80 test samples"), std::string::npos) << held.out;
}

TEST_F(OwnValidationTest, WithoutTestLabelsTheValSplitGivesTheFinalFiguresAndTheLogSaysSo) {
  write("val-only-labelled");
  // data.test_subset leaves the split that chooses whole, though it is the test split too.
  const testing::ProcessResult r = plugtrain("run exp.toml --set data.test_subset=50");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("data: val-only labels, 400 training and 120 val samples"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("the data set has no labelled test split, so the metrics after the last epoch are on val too, "
                       "which chose the model"),
            std::string::npos)
      << r.out;
  const nlohmann::json s = summary(0);
  EXPECT_EQ(s["selection_split"], "val");
  EXPECT_EQ(s["test_is_val"], true) << "summary.json says the test figures are not independent of the choice";
  // The same weights on the same samples.
  EXPECT_DOUBLE_EQ(s["final_test_accuracy"].get<double>(), s["final_val_accuracy"].get<double>()) << s.dump();

  // With data.val_fraction the held-out share chooses, and val becomes a test the choice never saw.
  const testing::ProcessResult held = plugtrain("run exp.toml --set data.val_fraction=0.25");
  ASSERT_EQ(held.exit_code, 0) << held.out;
  EXPECT_NE(held.out.find("300 training and 120 val samples"), std::string::npos) << held.out;
  EXPECT_NE(held.out.find("the test set (the data set's val split) is evaluated after the last epoch"),
            std::string::npos)
      << held.out;
  EXPECT_EQ(summary(1)["test_is_val"], false);
  const testing::ProcessResult described = plugtrain("data exp.toml --set data.val_fraction=0.25");
  ASSERT_EQ(described.exit_code, 0) << described.out;
  EXPECT_NE(described.out.find("; the test split: data.val_fraction validates), no labelled test split"),
            std::string::npos)
      << described.out;
}

TEST_F(OwnValidationTest, ATestMonitorOrAnEmptyValidationSplitIsOneLine) {
  write("three-splits");
  testing::ProcessResult r = plugtrain("run exp.toml --set checkpoint.monitor='\"test_accuracy\"'");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("--set checkpoint.monitor: checkpoint.monitor 'test_accuracy' would select by the test set "
                       "although data set 'three-splits' "
                       "has its own validation split: use 'val_accuracy'"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;

  write("empty-validation");
  r = plugtrain("run exp.toml");
  EXPECT_NE(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("data set 'empty-validation' (plugin 'splitsets') validation split 'val': no inputs"),
            std::string::npos)
      << r.out;
  EXPECT_FALSE(fs::exists(run_folder(0) / "summary.json"));
}

}  // namespace own_validation_test
}  // namespace plugtrain
