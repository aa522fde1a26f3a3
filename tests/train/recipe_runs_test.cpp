// The training recipe end to end with the executable, as a user runs it: a validation split that
// selects while the test set waits for the end, accumulation with its effective batch, EMA
// weights in checkpoints and exports, a paused and resumed run with all of them that ends
// exactly as an uninterrupted one, and one-line errors for combinations that cannot work.
// ctest-label: e2e
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/metrics_csv.h"
#include "support/run_folder.h"
#include "support/run_process.h"
#include "support/synthetic_experiment.h"

namespace plugtrain {
namespace recipe_runs_test {

using testing::run_process;
using testing::shell_quote;
namespace fs = std::filesystem;

const std::string kRecipe = testing::synthetic_experiment("recipe");

class RecipeRunTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::scratch_dir("recipe"); }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return dir_ / name;
  }
  testing::ProcessResult plugtrain(const std::string& args) {
    return run_process(testing::plugtrain_command(args, "", dir_));
  }
  fs::path run_folder(const std::string& name, int version = 0) { return testing::run_folder(dir_, name, version); }
  nlohmann::json summary(const std::string& name, int version = 0) { return testing::run_summary(dir_, name, version); }
  std::string text_of(const fs::path& p) {
    std::ifstream in(p);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  // A failed run's output: one line, naming `where` and `what`.
  void expect_one_line_error(const testing::ProcessResult& r, const std::string& where, const std::string& what) {
    EXPECT_EQ(r.exit_code, 2) << r.out;
    EXPECT_NE(r.out.find(where), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(what), std::string::npos) << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  }
  fs::path dir_;
};

TEST_F(RecipeRunTest, AValidationSplitSelectsAndTheTestSetIsEvaluatedOnceAtTheEnd) {
  write("val.toml", kRecipe + "\n[checkpoint]\nsave = \"best\"\n[early_stopping]\npatience = 5\n");
  auto r = plugtrain("run val.toml --set data.val_fraction=0.25");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("data: validation split of 200 samples held out of the training set"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("epoch 1/3  train loss"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("| val loss "), std::string::npos) << r.out;
  const nlohmann::json s = summary("recipe");
  EXPECT_EQ(s["selection_split"], "val");
  EXPECT_TRUE(s.contains("best_val_accuracy")) << s.dump();
  EXPECT_TRUE(s["final_test_accuracy"].is_number()) << s.dump();
  EXPECT_TRUE(s["final_val_accuracy"].is_number()) << s.dump();
  ASSERT_EQ(s["epochs"].size(), 3u);
  EXPECT_TRUE(s["epochs"][0]["test_loss"].is_null()) << "no test figures before the end";
  EXPECT_TRUE(s["epochs"][0]["val_loss"].is_number());
  EXPECT_TRUE(s["epochs"][2]["test_loss"].is_number());
  const std::string csv = text_of(run_folder("recipe") / "metrics.csv");
  EXPECT_NE(csv.find(",val_loss,val_accuracy,val_top5_accuracy\n"), std::string::npos) << csv;
  EXPECT_TRUE(fs::exists(run_folder("recipe") / "checkpoints" / "best.ckpt"));

  // An experiment without the split runs as before and says which split monitors.
  auto old = plugtrain("run val.toml");
  ASSERT_EQ(old.exit_code, 0) << old.out;
  EXPECT_NE(
      old.out.find("no validation split (data.val_fraction = 0): the test set is evaluated every epoch and monitored"),
      std::string::npos)
      << old.out;
  EXPECT_EQ(summary("recipe", 1)["selection_split"], "test");
}

// data.shuffle = false takes the training samples in order every epoch. With a learning rate
// too small to move any weight (1e-30 times a gradient is below every weight's float32 ulp) each
// step's loss depends only on which samples its batch holds: in order, epoch 2 repeats epoch 1's
// 16 losses exactly; shuffled, it draws other batches.
TEST_F(RecipeRunTest, UnshuffledEpochsTakeTheSamplesInTheSameOrder) {
  write("exp.toml", kRecipe);
  const std::string frozen =
      " --set train.epochs=2 --set train.log_interval=1 --set optim.lr=1e-30 --set optim.momentum=0";
  const auto epoch_losses = [&](int version) {
    std::map<std::string, std::vector<std::string>> by_epoch;
    for (const auto& row : testing::metrics_rows(run_folder("recipe", version) / "metrics.csv", "step"))
      by_epoch[row.at(1)].push_back(row.at(3));
    return by_epoch;
  };
  ASSERT_EQ(plugtrain("run exp.toml --set data.shuffle=false" + frozen).exit_code, 0);
  auto ordered = epoch_losses(0);
  ASSERT_EQ(ordered.size(), 2u);
  ASSERT_EQ(ordered.begin()->second.size(), 16u) << "800 samples in batches of 50";
  EXPECT_EQ(ordered.begin()->second, ordered.rbegin()->second);
  ASSERT_EQ(plugtrain("run exp.toml" + frozen).exit_code, 0);
  auto shuffled = epoch_losses(1);
  ASSERT_EQ(shuffled.size(), 2u);
  EXPECT_NE(shuffled.begin()->second, shuffled.rbegin()->second) << "each epoch a new order";
}

TEST_F(RecipeRunTest, AccumulationPrintsTheEffectiveBatch) {
  write("acc.toml", kRecipe);
  auto r = plugtrain("run acc.toml --set train.accumulate_steps=4 --set train.epochs=1");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("batch: 50 per micro-batch x 4 accumulated = effective batch 200 per optimizer step"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(summary("recipe")["steps"], 4) << "16 batches of 50, four per optimizer step";
}

TEST_F(RecipeRunTest, EmaWeightsAreCheckpointedAndExported) {
  write("ema.toml", kRecipe);
  ASSERT_EQ(plugtrain("run ema.toml --set train.ema_decay=0.9").exit_code, 0);
  const fs::path ckpt = run_folder("recipe") / "checkpoints" / "last.ckpt";
  auto ema = plugtrain("export " + shell_quote(ckpt.string()) + " ema.pt --ema");
  ASSERT_EQ(ema.exit_code, 0) << ema.out;
  EXPECT_NE(ema.out.find("wrote the EMA weights to ema.pt"), std::string::npos) << ema.out;
  ASSERT_EQ(plugtrain("export " + shell_quote(ckpt.string()) + " plain.pt").exit_code, 0);
  EXPECT_NE(text_of(dir_ / "ema.pt"), text_of(dir_ / "plain.pt")) << "the average is not the last weights";
  EXPECT_TRUE(summary("recipe")["ema_evaluated"].get<bool>());

  ASSERT_EQ(plugtrain("run ema.toml --set train.epochs=1").exit_code, 0);
  auto none = plugtrain("export " + shell_quote((run_folder("recipe", 1) / "checkpoints" / "last.ckpt").string()) +
                        " none.pt --ema");
  EXPECT_NE(none.exit_code, 0);
  EXPECT_NE(none.out.find("has no EMA weights (its run had train.ema_decay = 0)"), std::string::npos) << none.out;
  EXPECT_FALSE(fs::exists(dir_ / "none.pt"));
}

// Mixup's draws, the EMA and the accumulation groups all resume where they were.
TEST_F(RecipeRunTest, APausedRunWithTheWholeRecipeResumesToTheSameFigures) {
  write("all.toml", kRecipe + R"(
[schedule]
name = "onecycle"
)");
  const std::string recipe =
      " --set data.val_fraction=0.2 --set data.mixup_alpha=0.4 --set data.cutmix_alpha=1.0 --set train.ema_decay=0.95"
      " --set train.accumulate_steps=2";
  ASSERT_EQ(plugtrain("run all.toml" + recipe).exit_code, 0);
  ASSERT_EQ(plugtrain("run all.toml --stop-after-epoch 2" + recipe).exit_code, 0);
  auto resumed = plugtrain("run all.toml --resume last" + recipe);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out;
  const nlohmann::json straight = summary("recipe", 0), paused = summary("recipe", 1);
  EXPECT_EQ(straight["final_test_loss"], paused["final_test_loss"]);
  EXPECT_EQ(straight["final_val_loss"], paused["final_val_loss"]);
  EXPECT_EQ(straight["epochs"][2]["train_loss"], paused["epochs"][2]["train_loss"]);
}

TEST_F(RecipeRunTest, CombinationsThatCannotWorkAreOneLineAtTheirKey) {
  write("monitor.toml", kRecipe + "\n[checkpoint]\nmonitor = \"val_accuracy\"\n");
  expect_one_line_error(plugtrain("run monitor.toml"),
                        "monitor.toml:", "needs a validation split: set data.val_fraction");
  write("leak.toml", kRecipe + "\n[early_stopping]\nmonitor = \"test_accuracy\"\npatience = 2\n");
  expect_one_line_error(plugtrain("run leak.toml --set data.val_fraction=0.1"),
                        "leak.toml:", "would select by the test set");
  write("mix.toml", R"(
[model]
name = "mlp"
[task]
name = "regression"
[data]
dataset = "synthetic"
mixup_alpha = 0.2
)");
  expect_one_line_error(plugtrain("run mix.toml"), "mix.toml:8:", "does not learn (mixup and CutMix work with task");
  write("swa.toml", kRecipe + "swa_start = 2\nema_decay = 0.9\n");  // kRecipe ends in [train]
  expect_one_line_error(plugtrain("run swa.toml"), "swa.toml:", "both average the weights");
  write("cycle.toml", kRecipe + "\n[schedule]\nname = \"onecycle\"\nwarmup_steps = 10\n");
  expect_one_line_error(plugtrain("run cycle.toml"), "cycle.toml:", "warms up by itself");
  expect_one_line_error(
      plugtrain("run monitor.toml --set checkpoint.monitor=test_accuracy --set data.val_fraction=1.5"),
      "data.val_fraction", "must be in [0, 1)");
}

}  // namespace recipe_runs_test
}  // namespace plugtrain
