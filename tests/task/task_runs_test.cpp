// `plugtrain run` with each task, as a user runs it: [task] chooses the loss and the metrics,
// and every place a metric goes (the epoch lines, summary.json, metrics.csv, the monitors)
// carries the task's names. Synthetic data is made for the task (data/dataset.h), learnable, so
// each run must end well beyond chance. Bad [task] input is one line and exit 2.
// ctest-label: e2e
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/experiment_folder.h"
#include "support/fashion_mnist.h"
#include "support/run_process.h"

namespace plugtrain {
namespace task_runs_test {

using testing::slurp;
namespace fs = std::filesystem;

// Inline on purpose: BadTaskInputIsOneLineNamingTheKey names a position (exp.toml:21:8) after this text.
const std::string kBase = R"([experiment]
name = "task"
seed = 3
[data]
dataset = "synthetic"
synthetic_shape = [1, 8, 8]
synthetic_classes = 5
synthetic_train_size = 1024
synthetic_test_size = 256
batch_size = 32
test_batch_size = 256
[optim]
name = "adam"
lr = 0.003
[train]
epochs = 4
log_interval = 0
)";

class TaskRunTest : public testing::ExperimentFolderTest {
 protected:
  TaskRunTest() : ExperimentFolderTest("task", kBase) {}

  // Runs kBase with `tables` appended; the run's summary.json.
  nlohmann::json run_with(const std::string& tables, const std::string& args = "") {
    write_experiment(kBase + tables);
    last_ = plugtrain("run exp.toml --no-cache " + args);
    EXPECT_EQ(last_.exit_code, 0) << last_.out;
    return nlohmann::json::parse(slurp(version(0) / "summary.json"));
  }
  fs::path version(int v) const { return dir_ / "runs" / "task" / ("version_" + std::to_string(v)); }
  std::string csv_header() const {
    std::ifstream in(version(0) / "metrics.csv");
    std::string header;
    std::getline(in, header);
    return header;
  }
  // The last line a run printed that starts with `prefix`.
  std::string line_starting(const std::string& prefix) const {
    std::string found, line;
    std::istringstream lines(last_.out);
    while (std::getline(lines, line))
      if (line.rfind(prefix, 0) == 0) found = line;
    return found;
  }
  // A bad-input run: its exit code and its one error line.
  testing::ProcessResult refused(const std::string& tables) {
    write_experiment(kBase + tables);
    return plugtrain("run exp.toml");
  }

  testing::ProcessResult last_;
};

TEST_F(TaskRunTest, ClassificationStaysTheDefaultAndReportsTop5AndEachClass) {
  const nlohmann::json s = run_with("[model]\nname = \"mlp\"\nhidden = [32]\n[task]\nlabel_smoothing = 0.1\n");
  EXPECT_EQ(s["task"], "classification");
  EXPECT_EQ(s["metric"], "accuracy");
  EXPECT_GT(s["final_test_accuracy"].get<double>(), 0.9) << "5 learnable classes";
  EXPECT_GE(s["final_test"]["top5_accuracy"].get<double>(), s["final_test_accuracy"].get<double>());
  EXPECT_EQ(s["final_test_per_class"].size(), 5u);
  EXPECT_TRUE(s["final_test_per_class"].contains("accuracy/0")) << s["final_test_per_class"].dump();
  EXPECT_EQ(csv_header(),
            "kind,epoch,step,loss,accuracy,test_loss,test_accuracy,lr,samples_per_second,seconds,"
            "test_top5_accuracy");
  const std::string epoch = line_starting("epoch 4/4");
  EXPECT_NE(epoch.find(" acc "), std::string::npos) << epoch;
  EXPECT_NE(epoch.find(" top5 "), std::string::npos) << epoch;
  EXPECT_NE(last_.out.find("task: classification, metrics accuracy (training), accuracy, top5_accuracy (test)"),
            std::string::npos)
      << last_.out;
}

TEST_F(TaskRunTest, RegressionLearnsTheValueAndAMinimisedErrorDrivesEarlyStoppingAndTheBestCheckpoint) {
  const nlohmann::json s = run_with(
      "[model]\nname = \"mlp\"\nhidden = [64]\n[task]\nname = \"regression\"\nloss = \"huber\"\n"
      "[checkpoint]\nsave = \"best\"\nmonitor = \"test_rmse\"\n[early_stopping]\nmonitor = \"test_mae\"\npatience = "
      "3\n");
  EXPECT_EQ(s["metric"], "mae");
  EXPECT_GT(s["final_test"]["r2"].get<double>(), 0.8) << "a value in [0, 1) read from 64 noisy pixels";
  EXPECT_LT(s["final_test_mae"].get<double>(), 0.1) << "a constant guess is 0.25 off on average";
  EXPECT_LE(s["best_test_mae"].get<double>(), s["final_test_mae"].get<double>())
      << "the best of a minimised metric is its lowest";
  EXPECT_TRUE(fs::exists(version(0) / "checkpoints" / "best.ckpt"));
  EXPECT_EQ(csv_header(),
            "kind,epoch,step,loss,mae,test_loss,test_mae,lr,samples_per_second,seconds,train_rmse,"
            "test_rmse,test_r2");
  EXPECT_NE(line_starting("done:").find("done: final test mae "), std::string::npos) << last_.out;
  EXPECT_NE(line_starting("epoch 4/4").find(" r2 "), std::string::npos) << last_.out;
}

TEST_F(TaskRunTest, MultilabelFindsBothClassesOfAnImage) {
  const nlohmann::json s = run_with("[model]\nname = \"mlp\"\nhidden = [64]\n[task]\nname = \"multilabel\"\n");
  EXPECT_EQ(s["metric"], "map");
  // Chance: each label's precision is its base rate, about 0.36 for one or two of 5 classes.
  EXPECT_GT(s["final_test_map"].get<double>(), 0.9);
  EXPECT_GT(s["final_test"]["f1"].get<double>(), 0.8);
  EXPECT_TRUE(s["final_test_per_class"].contains("ap/4")) << s["final_test_per_class"].dump();
}

TEST_F(TaskRunTest, SegmentationWithAUnetLabelsThePixels) {
  const nlohmann::json s =
      run_with("[model]\nname = \"unet\"\nwidth = 8\ndepth = 1\n[task]\nname = \"segmentation\"\n");
  EXPECT_EQ(s["metric"], "miou");
  // 6 pixel classes (background and 5 items): a constant guess scores about 1/6 of a mean IoU.
  EXPECT_GT(s["final_test_miou"].get<double>(), 0.5);
  EXPECT_GT(s["final_test"]["pixel_accuracy"].get<double>(), 0.8);
  EXPECT_EQ(s["final_test_per_class"].size(), 6u);
}

TEST_F(TaskRunTest, SequenceRecognitionWithACrnnAndCtcReadsTheStrips) {
  // Strips of 1 to 6 items of 5 classes (data/dataset.h); the CRNN's 12 steps read them.
  const nlohmann::json s = run_with(
      "[model]\nname = \"crnn\"\nchannels = [16, 32]\nhidden = 32\n[task]\nname = \"sequence\"\n"
      "[early_stopping]\nmonitor = \"test_cer\"\npatience = 5\n",
      "--set data.synthetic_shape=[1,8,48] --set train.epochs=8 --set optim.lr=0.005");
  EXPECT_EQ(s["metric"], "cer");
  EXPECT_LT(s["final_test_cer"].get<double>(), 0.1) << "chance: most of every sequence wrong";
  EXPECT_GT(s["final_test"]["sequence_accuracy"].get<double>(), 0.6);
  EXPECT_LE(s["best_test_cer"].get<double>(), s["final_test_cer"].get<double>()) << "CER is minimised";
  EXPECT_NE(last_.out.find("sequences of up to 6 of 5 classes"), std::string::npos) << last_.out;
}

TEST_F(TaskRunTest, ResumingARegressionRunMidwayEndsWhereAnUnbrokenOneDoes) {
  const std::string tables = "[model]\nname = \"mlp\"\nhidden = [16]\n[task]\nname = \"regression\"\n";
  const nlohmann::json whole = run_with(tables);
  write_experiment(kBase + tables);
  ASSERT_EQ(plugtrain("run exp.toml --stop-after-epoch 2").exit_code, 0);
  const auto resumed = plugtrain("run exp.toml --resume last");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out;
  const nlohmann::json after = nlohmann::json::parse(slurp(version(1) / "summary.json"));
  EXPECT_EQ(after["final_test_mae"], whole["final_test_mae"]) << "bitwise";
  EXPECT_EQ(after["epochs"].size(), 4u);
  EXPECT_EQ(after["epochs"][3]["train_rmse"], whole["epochs"][3]["train_rmse"]);
}

TEST_F(TaskRunTest, BadTaskInputIsOneLineNamingTheKey) {
  const std::string mlp = "[model]\nname = \"mlp\"\n";
  auto unknown = refused(mlp + "[task]\nname = \"regresion\"\n");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.out.find("exp.toml:21:8: unknown task"), std::string::npos) << unknown.out;
  EXPECT_NE(unknown.out.find(": unknown task 'regresion' (did you mean 'regression'?); available: "
                             "classification, multilabel, regression, segmentation, sequence"),
            std::string::npos)
      << unknown.out;
  auto option = refused(mlp + "[task]\nname = \"regression\"\ndelta = 2.0\n");
  EXPECT_EQ(option.exit_code, 2);
  EXPECT_NE(option.out.find("task 'regression' has no option 'delta'"), std::string::npos) << option.out;
  auto value = refused(mlp + "[task]\nname = \"regression\"\nloss = \"l3\"\n");
  EXPECT_EQ(value.exit_code, 2);
  EXPECT_NE(value.out.find("task.loss"), std::string::npos) << value.out;
  auto monitor =
      refused(mlp + "[task]\nname = \"regression\"\n[early_stopping]\nmonitor = \"test_accuracy\"\npatience = 1\n");
  EXPECT_EQ(monitor.exit_code, 2);
  EXPECT_NE(monitor.out.find("early_stopping.monitor 'test_accuracy' is not a metric of task 'regression'"),
            std::string::npos)
      << monitor.out;
  write_experiment(kBase + mlp + "[task]\nname = \"regression\"\n");
  // Real Fashion-MNIST (Debian's dataset-fashion-mnist).
  auto images = plugtrain("run exp.toml --set data.dataset=\"fashion-mnist\"" + testing::fashion_mnist_path_set());
  EXPECT_EQ(images.exit_code, 2) << images.out;
  EXPECT_NE(images.out.find("task 'regression' learns real values per sample, but data set 'fashion-mnist' gives one "
                            "class per sample"),
            std::string::npos)
      << images.out;
  EXPECT_FALSE(fs::exists(version(0) / "checkpoints" / "last.ckpt")) << "nothing trained";
}

}  // namespace task_runs_test
}  // namespace plugtrain
