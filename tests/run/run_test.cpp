// `plugtrain run` end to end in fresh processes: real training, reproducibility, and the
// errors a user sees for bad input.
// ctest-label: e2e
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/experiment_toml.h"
#include "support/fashion_mnist.h"
#include "support/metrics_csv.h"
#include "support/run_folder.h"
#include "support/run_process.h"
#include "support/synthetic_experiment.h"

namespace plugtrain {
namespace run_test {

using testing::run_process;
using testing::shell_quote;
namespace fs = std::filesystem;

const std::string kFashion = testing::fashion_mnist_dir().string();

class RunTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::scratch_dir("run"); }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path write(const std::string& name, const std::string& text) {
    fs::path p = dir_ / name;
    std::ofstream(p) << text;
    return p;
  }
  testing::ProcessResult run(const fs::path& exp, const std::string& args = "") {
    return run_process(testing::plugtrain_command("run " + shell_quote(exp.string()) + " " + args, "", dir_));
  }
  // The newest run's summary: runs/<name>/version_<N>/summary.json.
  nlohmann::json summary(const std::string& name) {
    fs::path newest;
    int newest_version = -1;
    for (const auto& entry : fs::directory_iterator(dir_ / "runs" / name)) {
      const int v = std::stoi(entry.path().filename().string().substr(std::string("version_").size()));
      if (v > newest_version) {
        newest_version = v;
        newest = entry.path();
      }
    }
    std::ifstream in(newest / "summary.json");
    return nlohmann::json::parse(in);
  }
  fs::path dir_;
};

const std::string kSynthetic = testing::synthetic_experiment("synthetic");

TEST_F(RunTest, ShortFashionMnistRunOnASubsetLearns) {
  if (!fs::exists(kFashion)) GTEST_SKIP() << "dataset-fashion-mnist not installed";
  fs::path exp = write("fm.toml", testing::ExperimentToml("fm")
                                      .set("experiment.seed", 1)
                                      .on_cpu()  // the figures below are the CPU's, on a GPU machine too
                                      .set("model.name", "mlp")
                                      .set("model.hidden", {128})
                                      .set("data.path", testing::fashion_mnist_dir().string())
                                      .set("data.train_subset", 6000)
                                      .set("data.test_subset", 2000)
                                      .set("train.epochs", 2)
                                      .set("train.log_interval", 30)
                                      .text());
  auto r = run(exp);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  nlohmann::json s = summary("fm");
  EXPECT_EQ(s["backend"], "cpu");
  // 60 steps an epoch (6000 samples, batches of 100), one logged every 30.
  const auto steps = testing::metrics_rows(testing::run_folder(dir_, "fm", 0) / "metrics.csv", "step");
  ASSERT_EQ(steps.size(), 4u);
  EXPECT_EQ(steps[0][1], "1");
  EXPECT_EQ(steps[3][1], "2");
  EXPECT_GE(s["final_test_accuracy"].get<double>(), 0.75) << s.dump();
  EXPECT_EQ(s["device"], "cpu");
  EXPECT_EQ(s["epochs"].size(), 2u);
  EXPECT_GT(s["samples_per_second"].get<double>(), 0);
}

TEST_F(RunTest, SameSeedGivesTheSameResultTwice) {
  fs::path exp = write("s.toml", kSynthetic);
  auto a = run(exp);
  ASSERT_EQ(a.exit_code, 0) << a.out;
  nlohmann::json first = summary("synthetic");
  auto b = run(exp);
  ASSERT_EQ(b.exit_code, 0) << b.out;
  nlohmann::json second = summary("synthetic");
  for (std::size_t i = 0; i < first["epochs"].size(); ++i) {
    EXPECT_EQ(first["epochs"][i]["train_loss"], second["epochs"][i]["train_loss"]);
    EXPECT_EQ(first["epochs"][i]["test_loss"], second["epochs"][i]["test_loss"]);
  }
  EXPECT_GE(first["final_test_accuracy"].get<double>(), 0.9) << first.dump();

  auto c = run(exp, "--set experiment.seed=8");
  ASSERT_EQ(c.exit_code, 0) << c.out;
  EXPECT_NE(summary("synthetic")["epochs"][0]["train_loss"], first["epochs"][0]["train_loss"]);
}

TEST_F(RunTest, EveryOptimizerAndScheduleTrains) {
  fs::path exp = write("s.toml", kSynthetic);
  for (const std::string& opt : {"sgd", "adam", "adamw", "rmsprop", "lion"}) {
    const std::string lr = opt == "sgd" ? "0.1" : opt == "lion" ? "0.001" : "0.01";
    for (const std::string& schedule : {"cosine", "multistep"}) {
      auto r = run(exp, "--set optim.name=" + opt + " --set optim.lr=" + lr + " --set schedule.name=" + schedule +
                            " --set schedule.milestones=[2] --set schedule.warmup_epochs=1");
      ASSERT_EQ(r.exit_code, 0) << opt << " " << schedule << "\n" << r.out;
      EXPECT_GE(summary("synthetic")["final_test_accuracy"].get<double>(), 0.8) << opt << " " << schedule << r.out;
    }
  }
}

TEST_F(RunTest, MissingDataFolderIsNamedBeforeAnyWork) {
  fs::path exp = write("bad.toml", "[model]\nname = \"mlp\"\n[data]\npath = \"/no/such/folder\"\n");
  auto r = run(exp);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find(exp.string() + ":4:8: data.path '/no/such/folder' does not exist"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("epoch"), std::string::npos) << r.out;
}

TEST_F(RunTest, SyntheticDataIsTheDatasetsPluginsWhicheverWayItsOptionsAreWritten) {
  // The [data] spelling (data.synthetic_*) and the data set's own [dataset] keys reach the bundled
  // plugin's synthetic data set alike.
  std::string dataset_table = kSynthetic;
  for (const std::string key : {"synthetic_shape = [1, 8, 8]\n", "synthetic_classes = 4\n",
                                "synthetic_train_size = 800\n", "synthetic_test_size = 200\n"})
    dataset_table.erase(dataset_table.find(key), key.size());
  dataset_table += "\n[dataset]\nshape = [1, 8, 8]\nclasses = 4\ntrain_size = 300\ntest_size = 200\n";
  auto written = run(write("dataset_table.toml", dataset_table), "--set train.epochs=1");
  ASSERT_EQ(written.exit_code, 0) << written.out;
  EXPECT_NE(written.out.find("data: synthetic, 300 training and 200 test samples"), std::string::npos) << written.out;
  auto old_keys = run(write("data_keys.toml", kSynthetic), "--set train.epochs=1 --set data.synthetic_train_size=300");
  ASSERT_EQ(old_keys.exit_code, 0) << old_keys.out;
  EXPECT_NE(old_keys.out.find("data: synthetic, 300 training and 200 test samples"), std::string::npos) << old_keys.out;
  // A run's resolved experiment.toml writes both spellings, agreeing: it runs again as it is.
  const fs::path resolved = dir_ / "runs" / "synthetic" / "version_0" / "experiment.toml";
  auto again = run(resolved);
  ASSERT_EQ(again.exit_code, 0) << again.out;
  EXPECT_NE(again.out.find("data: synthetic, 300 training and 200 test samples"), std::string::npos) << again.out;

  // Both at once must agree; the data set's own rules hold whichever way.
  auto both = run(write("both.toml", dataset_table), "--set data.synthetic_train_size=400");
  EXPECT_EQ(both.exit_code, 2) << both.out;
  EXPECT_NE(
      both.out.find("--set data.synthetic_train_size: data.synthetic_train_size = 400 and dataset.train_size = 300 "
                    "set the same option; keep one"),
      std::string::npos)
      << both.out;
  auto shape = run(write("shape.toml", dataset_table), "--set dataset.shape=[8,8]");
  EXPECT_EQ(shape.exit_code, 2) << shape.out;
  EXPECT_NE(shape.out.find("dataset.shape"), std::string::npos) << shape.out;
  const auto folders = std::distance(fs::directory_iterator(dir_ / "runs" / "synthetic"), fs::directory_iterator{});
  EXPECT_EQ(folders, 3) << "a run folder for each of the three runs, none for the refused experiments";
}

TEST_F(RunTest, UnknownModelAndUnknownModelOptionAreNamed) {
  auto r = run(write("m.toml", "[model]\nname = \"mpl\"\n"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find(":2:8: unknown model 'mpl' (did you mean 'mlp'?); available: exported, mlp, convnet, lenet5"),
            std::string::npos)
      << r.out;
  auto o = run(write("o.toml", "[model]\nname = \"mlp\"\nhiden = [3]\n"));
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.out.find(":3:1: model 'mlp' has no option 'hiden' (did you mean 'hidden'?)"), std::string::npos) << o.out;
}

// The models plugin's option rules are checked before any work (the factory is not reached).
TEST_F(RunTest, BadModelOptionValueIsRefusedBeforeAnyWork) {
  auto r = run(write("s.toml", kSynthetic), "--set model.activation=sigmoidish");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("--set model.activation: model.activation must be one of relu, gelu, tanh (got \"sigmoidish\")"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("data:"), std::string::npos) << "no data loaded: " << r.out;
}

TEST_F(RunTest, SyntaxErrorExitsWithFileLineColumn) {
  fs::path exp = write("syn.toml", "[model]\nname = \"mlp\n");
  auto r = run(exp);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("plugtrain: error: " + exp.string() + ":2:"), std::string::npos) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << "one line: " << r.out;
}

TEST_F(RunTest, NamedUnusableBackendFailsWithItsReason) {
  if (fs::exists("/dev/nvidiactl")) GTEST_SKIP() << "this machine has an NVIDIA driver";
  auto r = run(write("s.toml", kSynthetic), "--set backend.name=cuda");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("backend 'cuda' is unusable: no_driver"), std::string::npos) << r.out;
}

TEST_F(RunTest, NoCudaFlagDisablesEveryGpuAndSaysSo) {
  auto r = run(write("s.toml", kSynthetic), "--no-cuda");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("backend: skipped cuda: disabled"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("backend: skipped mps: disabled"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("backend: chose cpu"), std::string::npos) << r.out;
}

TEST_F(RunTest, LabelNoiseAndAugmentationRun) {
  auto r = run(write("s.toml", kSynthetic),
               "--set data.label_noise=0.2 --set 'data.augmentation=[\"random_crop\",\"horizontal_flip\"]' "
               "--set data.crop_padding=1");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("label noise 0.2 replaced 160 training labels"), std::string::npos) << r.out;
}

TEST_F(RunTest, MixedPrecisionTrainsOnTheCpu) {
  fs::path exp = write("s.toml", kSynthetic);
  for (const std::string precision : {"bf16", "fp16"}) {
    auto r = run(exp, "--set train.precision=" + precision);
    ASSERT_EQ(r.exit_code, 0) << precision << "\n" << r.out;
    nlohmann::json s = summary("synthetic");
    EXPECT_EQ(s["precision"], precision);
    EXPECT_GE(s["final_test_accuracy"].get<double>(), 0.8) << precision << r.out;
    EXPECT_NE(s["epochs"][0]["memory"]["used_bytes"], nullptr);
  }
}

// `script` gives the run a pseudo-terminal, as a person's shell would.
TEST_F(RunTest, ProgressBarOnATerminalPlainLinesOtherwiseNoColorRespected) {
  fs::path exp = write("s.toml", kSynthetic);
  const std::string cmd = shell_quote(PLUGTRAIN_EXE) + " run " + shell_quote(exp.string());
  auto tty = run_process("cd " + shell_quote(dir_.string()) + " && script -qec " + shell_quote(cmd) + " /dev/null");
  ASSERT_EQ(tty.exit_code, 0) << tty.out;
  EXPECT_NE(tty.out.find("ETA "), std::string::npos) << tty.out;
  EXPECT_NE(tty.out.find("16/16"), std::string::npos) << tty.out;
  EXPECT_NE(tty.out.find("\033[32m"), std::string::npos) << "colour on a terminal";

  auto no_color =
      run_process("cd " + shell_quote(dir_.string()) + " && NO_COLOR=1 script -qec " + shell_quote(cmd) + " /dev/null");
  ASSERT_EQ(no_color.exit_code, 0);
  EXPECT_NE(no_color.out.find("ETA "), std::string::npos);
  EXPECT_EQ(no_color.out.find("\033[32m"), std::string::npos) << "NO_COLOR must switch colour off";

  auto piped = run(exp);
  ASSERT_EQ(piped.exit_code, 0);
  EXPECT_EQ(piped.out.find("ETA "), std::string::npos) << "no progress bar when stdout is not a terminal";
  EXPECT_EQ(piped.out.find('\r'), std::string::npos);
}

}  // namespace run_test
}  // namespace plugtrain
