// The shipped task examples on real Fashion-MNIST (Debian's dataset-fashion-mnist), each as a
// user runs it, made smaller with --set to fit CI: each must end well beyond chance. The data
// sets come from the bundled data-sets plugin (plugins/fashion_mnist_tasks), through the
// SDK 3.5 interface a third-party data-sets plugin uses.
// ctest-label: e2e
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/experiment_folder.h"
#include "support/fashion_mnist.h"
#include "support/run_process.h"

namespace plugtrain {
namespace task_examples_test {

using testing::shell_quote;
using testing::slurp;
namespace fs = std::filesystem;

class TaskExampleTest : public testing::ExperimentFolderTest {
 protected:
  TaskExampleTest() : ExperimentFolderTest("task-example", "") {}

  // Runs examples/<file> with `sets`; its summary.json.
  nlohmann::json run_example(const std::string& file, const std::string& sets) {
    const fs::path example = fs::path(PLUGTRAIN_SOURCE_DIR) / "examples" / file;
    last_ = plugtrain("run " + shell_quote(example.string()) + " --no-cache --set train.log_interval=0 " +
                      testing::fashion_mnist_path_set() + sets);
    EXPECT_EQ(last_.exit_code, 0) << last_.out;
    for (const auto& entry : fs::recursive_directory_iterator(dir_ / "runs"))
      if (entry.path().filename() == "summary.json") return nlohmann::json::parse(slurp(entry.path()));
    ADD_FAILURE() << "no summary.json\n" << last_.out;
    return {};
  }

  testing::ProcessResult last_;
};

TEST_F(TaskExampleTest, TheCrnnReadsStripsOfFashionMnistItems) {
  const nlohmann::json s = run_example("fashion_mnist_strips_crnn.toml",
                                       "--set dataset.train_size=6000 --set dataset.test_size=500 "
                                       "--set dataset.max_items=4 --set train.epochs=3");
  // Chance reads most items wrong; Fashion-MNIST's single-item classifiers reach 0.9 accuracy.
  EXPECT_LT(s["final_test_cer"].get<double>(), 0.35) << last_.out;
  EXPECT_NE(last_.out.find("data: strips of Fashion-MNIST from " + testing::fashion_mnist_dir().string()),
            std::string::npos)
      << last_.out;
}

TEST_F(TaskExampleTest, PairsOfItemsAreTaggedWithBothClasses) {
  const nlohmann::json s =
      run_example("fashion_mnist_pairs_multilabel.toml",
                  "--set dataset.train_size=6000 --set dataset.test_size=500 --set train.epochs=2");
  // Chance: each label's average precision is its base rate, about 0.19.
  EXPECT_GT(s["final_test_map"].get<double>(), 0.8) << last_.out;
  EXPECT_TRUE(s["final_test_per_class"].contains("ap/bag")) << s["final_test_per_class"].dump();
}

TEST_F(TaskExampleTest, TheRotationOfAnItemIsPredictedInDegrees) {
  const nlohmann::json s =
      run_example("fashion_mnist_rotation_regression.toml",
                  "--set dataset.train_size=6000 --set dataset.test_size=500 --set train.epochs=3");
  // Always guessing 0 is 22.5 degrees off on average.
  EXPECT_LT(s["final_test_mae"].get<double>(), 12.0) << last_.out;
  EXPECT_GT(s["final_test"]["r2"].get<double>(), 0.5) << last_.out;
}

TEST_F(TaskExampleTest, TheVisionTransformerClassifiesFashionMnist) {
  const nlohmann::json s = run_example("fashion_mnist_vit.toml",
                                       "--set data.train_subset=10000 --set data.test_subset=1000 --set train.epochs=3 "
                                       "--set schedule.warmup_steps=50");
  // Chance is 0.1; an MLP reaches about 0.8 on this much data; the ViT 0.77 after 2 epochs, 0.80 after 3 here.
  EXPECT_GT(s["final_test_accuracy"].get<double>(), 0.7) << last_.out;
}

TEST_F(TaskExampleTest, TheUnetLabelsEachPixelWithItsItemsClass) {
  const nlohmann::json s =
      run_example("fashion_mnist_masks_unet.toml",
                  "--set dataset.train_size=6000 --set dataset.test_size=500 --set train.epochs=2");
  // Background alone (about half the pixels) is a mean IoU of 1/11.
  EXPECT_GT(s["final_test_miou"].get<double>(), 0.3) << last_.out;
  EXPECT_GT(s["final_test"]["pixel_accuracy"].get<double>(), 0.7) << last_.out;
  EXPECT_TRUE(s["final_test_per_class"].contains("iou/background")) << s["final_test_per_class"].dump();
}

TEST_F(TaskExampleTest, DataListsThePluginsDataSetsAndDescribesOne) {
  const auto list = plugtrain("data --list");
  EXPECT_EQ(list.exit_code, 0) << list.out;
  for (const char* name :
       {"fashion-mnist-strips  (fashion_mnist_tasks)", "fashion-mnist-pairs", "fashion-mnist-rotation",
        "fashion-mnist-masks", "max_items : int = 8",
        // The built-in data sets are the bundled datasets plugin's, listed the same way.
        "fashion-mnist  (datasets)", "cifar100  (datasets)", "label : string = \"fine\"", "synthetic  (datasets)",
        "targets: what the run's task learns", "shape : int list = [1, 28, 28]"})
    EXPECT_NE(list.out.find(name), std::string::npos) << name << "\n" << list.out;
  const fs::path example = fs::path(PLUGTRAIN_SOURCE_DIR) / "examples" / "fashion_mnist_strips_crnn.toml";
  const auto described =
      plugtrain("data " + shell_quote(example.string()) +
                " --set dataset.train_size=200 --set dataset.test_size=50 --grid grid.png --samples 8" +
                testing::fashion_mnist_path_set());
  EXPECT_EQ(described.exit_code, 0) << described.out;
  EXPECT_NE(described.out.find("sequences of 1 to 8 classes"), std::string::npos) << described.out;
  EXPECT_NE(described.out.find("sample: 1x28x224"), std::string::npos) << described.out;
  EXPECT_TRUE(fs::exists(dir_ / "grid.png"));
}

TEST_F(TaskExampleTest, BadDataSetInputIsOneLine) {
  const fs::path example = fs::path(PLUGTRAIN_SOURCE_DIR) / "examples" / "fashion_mnist_strips_crnn.toml";
  const std::string run = "run " + shell_quote(example.string()) + testing::fashion_mnist_path_set();
  auto typo = plugtrain(run + " --set data.dataset=\"fashion-mnist-stripes\"");
  EXPECT_EQ(typo.exit_code, 2);
  EXPECT_NE(typo.out.find("--set data.dataset: unknown data set 'fashion-mnist-stripes'"), std::string::npos)
      << typo.out;
  EXPECT_NE(typo.out.find("synthetic, text, tokens, fashion-mnist-strips, fashion-mnist-pairs, fashion-mnist-rotation, "
                          "fashion-mnist-masks"),
            std::string::npos)
      << "the built-in and the plugin's data sets: " << typo.out;
  auto option = plugtrain(run + " --set dataset.max_items=0");
  EXPECT_EQ(option.exit_code, 2);
  EXPECT_NE(option.out.find("dataset.max_items"), std::string::npos) << option.out;
  auto task = plugtrain(run + " --set task.name=\"classification\"");
  EXPECT_EQ(task.exit_code, 2);
  EXPECT_NE(
      task.out.find("task 'classification' learns one class per sample, but data set 'fashion-mnist-strips' gives a "
                    "sequence of classes per sample"),
      std::string::npos)
      << task.out;
  auto missing = plugtrain(run + " --set data.path=\"/nonexistent\"");
  EXPECT_EQ(missing.exit_code, 1) << missing.out;
  EXPECT_NE(missing.out.find("data set 'fashion-mnist-strips' (plugin 'fashion_mnist_tasks'): /nonexistent/"
                             "train-images-idx3-ubyte(.gz): not found"),
            std::string::npos)
      << missing.out;
  auto flips = plugtrain(run + " --set " + shell_quote("data.augmentation=[\"horizontal_flip\"]"));
  EXPECT_EQ(flips.exit_code, 2);
  EXPECT_NE(flips.out.find("horizontal_flip moves the pixels of the images but not the targets of task 'sequence'"),
            std::string::npos)
      << flips.out;
}

}  // namespace task_examples_test
}  // namespace plugtrain
