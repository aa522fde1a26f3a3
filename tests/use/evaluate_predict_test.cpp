// `plugtrain evaluate` and `plugtrain predict` end to end, on a tiny real Fashion-MNIST run
// trained once per test process: evaluate's figures are the run's own for the same weights and
// split, its files add up, and predict's classes for image files are those evaluate found for
// the same samples.
// ctest-label: e2e
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "data/image_codec.h"
#include "readers/idx_reader.h"
#include "support/experiment_toml.h"
#include "support/fashion_mnist.h"
#include "support/run_process.h"

namespace plugtrain {
namespace evaluate_predict_test {

namespace fs = std::filesystem;
using testing::run_process;
using testing::shell_quote;

constexpr int kTrainSamples = 2000, kTestSamples = 300;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::vector<std::string> fields_of(const std::string& line) {
  std::vector<std::string> fields;
  std::istringstream in(line);
  for (std::string field; std::getline(in, field, ',');) fields.push_back(field);
  return fields;
}

nlohmann::json read_json(const fs::path& file) {
  std::ifstream in(file);
  return nlohmann::json::parse(in);
}

class EvaluatePredictTest : public ::testing::Test {
 protected:
  // One run for every test of the process (ctest starts one process per test).
  static void SetUpTestSuite() {
    if (!fs::exists(testing::fashion_mnist_dir())) return;
    dir_ = fs::temp_directory_path() / ("plugtrain-evaluate-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    testing::ExperimentToml("fm-eval")
        .set("experiment.seed", 3)
        .on_cpu()  // the same device for the run and the commands that read it
        .set("model.name", "mlp")
        .set("model.hidden", {64})
        .set("data.path", testing::fashion_mnist_dir().string())
        .set("data.train_subset", kTrainSamples)
        .set("data.test_subset", kTestSamples)
        .set("data.batch_size", 100)
        .set("train.epochs", 1)
        .set("train.log_interval", 0)
        .write(dir_ / "exp.toml");
    const testing::ProcessResult r = plugtrain("run exp.toml");
    run_log_ = r.out;
    trained_ = r.exit_code == 0;
  }
  static void TearDownTestSuite() {
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  void SetUp() override {
    if (!fs::exists(testing::fashion_mnist_dir())) GTEST_SKIP() << "dataset-fashion-mnist not installed";
    ASSERT_TRUE(trained_) << run_log_;
  }

  static testing::ProcessResult plugtrain(const std::string& args, bool merge_stderr = true) {
    return run_process(testing::plugtrain_command(args, "", dir_), merge_stderr);
  }
  // The command's stdout as JSON (its log lines go to stderr).
  static nlohmann::json plugtrain_json(const std::string& args) {
    const testing::ProcessResult r = plugtrain(args, /*merge_stderr=*/false);
    EXPECT_EQ(r.exit_code, 0) << r.out;
    try {
      return nlohmann::json::parse(r.out);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "not JSON: " << e.what() << "\n" << r.out;
      return {};
    }
  }
  static fs::path run_folder() { return dir_ / "runs" / "fm-eval" / "version_0"; }
  static nlohmann::json summary() { return read_json(run_folder() / "summary.json"); }

  // The run's final test figures must be evaluate's, to float precision.
  static void expect_run_figures(const nlohmann::json& evaluation) {
    const nlohmann::json s = summary();
    ASSERT_EQ(evaluation["split"], "test");
    EXPECT_EQ(evaluation["samples"].get<int>(), kTestSamples);
    const double loss = s["final_test_loss"].get<double>();
    EXPECT_NEAR(evaluation["loss"].get<double>(), loss, 1e-6 * std::abs(loss));
    for (const auto& [name, value] : s["final_test"].items())
      EXPECT_NEAR(evaluation["metrics"][name].get<double>(), value.get<double>(), 1e-9) << name;
  }

  static inline fs::path dir_;
  static inline bool trained_ = false;
  static inline std::string run_log_;
};

TEST_F(EvaluatePredictTest, RunFolderGivesTheRunsFinalTestFigures) {
  const nlohmann::json e = plugtrain_json("evaluate " + shell_quote(run_folder().string()) + " --json");
  expect_run_figures(e);
  EXPECT_EQ(e["weights"], (run_folder() / "checkpoints" / "last.ckpt").string());
  // Each class's accuracy is the run's, and it is the recall the confusion matrix gives.
  for (const auto& [key, value] : summary()["final_test_per_class"].items()) {
    const std::string name = key.substr(key.find('/') + 1);
    EXPECT_NEAR(e["per_class"][name]["accuracy"].get<double>(), value.get<double>(), 1e-9) << key;
    EXPECT_NEAR(e["per_class"][name]["recall"].get<double>(), value.get<double>(), 1e-9) << key;
  }
  // Without --json: the figures as the run's epoch line prints them.
  const testing::ProcessResult text = plugtrain("evaluate " + shell_quote(run_folder().string()), false);
  ASSERT_EQ(text.exit_code, 0) << text.out;
  char line[64];
  std::snprintf(line, sizeof line, "test loss %.4f acc %.4f", summary()["final_test_loss"].get<double>(),
                summary()["final_test_accuracy"].get<double>());
  EXPECT_NE(text.out.find(line), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("precision"), std::string::npos) << text.out;
}

TEST_F(EvaluatePredictTest, CheckpointAndExportedStateDictGiveTheSameFigures) {
  const fs::path last = run_folder() / "checkpoints" / "last.ckpt";
  expect_run_figures(plugtrain_json("evaluate " + shell_quote(last.string()) + " --json"));
  EXPECT_TRUE(fs::exists(run_folder() / "checkpoints" / "evaluate-last" / "test" / "confusion.csv"));
  const testing::ProcessResult exported = plugtrain("export " + shell_quote(last.string()) + " model.pt");
  ASSERT_EQ(exported.exit_code, 0) << exported.out;
  // A state_dict knows no experiment: the run's file says which model it is; the statistics
  // are computed again from the same training set, so the figures stay the run's.
  expect_run_figures(plugtrain_json("evaluate model.pt --experiment " +
                                    shell_quote((run_folder() / "experiment.toml").string()) + " --json"));
}

TEST_F(EvaluatePredictTest, ConfusionMatrixAddsUpToTheSplit) {
  const nlohmann::json e = plugtrain_json("evaluate " + shell_quote(run_folder().string()) + " --json");
  const fs::path out = run_folder() / "evaluate" / "test";
  ASSERT_EQ(e["out"], out.string());
  const std::vector<std::string> rows = lines_of(testing::slurp(out / "confusion.csv"));
  ASSERT_EQ(rows.size(), 11u);  // the header and 10 classes
  long total = 0, diagonal = 0;
  for (std::size_t i = 1; i < rows.size(); ++i) {
    const std::vector<std::string> f = fields_of(rows[i]);
    ASSERT_EQ(f.size(), 11u) << rows[i];
    long row = 0;
    for (std::size_t j = 1; j < f.size(); ++j) row += std::stol(f[j]);
    EXPECT_EQ(row, e["per_class"][f[0]]["support"].get<long>()) << rows[i];
    diagonal += std::stol(f[i]);
    total += row;
  }
  EXPECT_EQ(total, kTestSamples);
  EXPECT_NEAR(double(diagonal) / kTestSamples, e["metrics"]["accuracy"].get<double>(), 1e-9);
  EXPECT_EQ(lines_of(testing::slurp(out / "per_class.csv")).size(), 11u);
  EXPECT_EQ(lines_of(testing::slurp(out / "predictions.csv")).size(), std::size_t(kTestSamples + 1));
  EXPECT_EQ(testing::slurp(out / "confusion.png").substr(0, 8), "\x89PNG\r\n\x1a\n");
}

TEST_F(EvaluatePredictTest, TrainSplitAndFlipAveragingGiveValidFigures) {
  const nlohmann::json train =
      plugtrain_json("evaluate " + shell_quote(run_folder().string()) + " --split train --json");
  EXPECT_EQ(train["split"], "train");
  EXPECT_EQ(train["samples"].get<int>(), kTrainSamples);
  EXPECT_GT(train["metrics"]["accuracy"].get<double>(), 0.5);
  EXPECT_TRUE(std::isfinite(train["loss"].get<double>()));

  const nlohmann::json flip = plugtrain_json("evaluate " + shell_quote(run_folder().string()) + " --tta flip --json");
  EXPECT_EQ(flip["tta"], "flip");
  EXPECT_EQ(flip["samples"].get<int>(), kTestSamples);
  const double accuracy = flip["metrics"]["accuracy"].get<double>();
  EXPECT_GE(accuracy, 0.0);
  EXPECT_LE(accuracy, 1.0);
  EXPECT_TRUE(std::isfinite(flip["loss"].get<double>()));
  EXPECT_TRUE(fs::exists(run_folder() / "evaluate" / "test-tta-flip" / "confusion.csv"));
}

TEST_F(EvaluatePredictTest, ValSplitGivesTheRunsFinalValFigures) {
  // A run of its own that holds out a validation split.
  std::string experiment = testing::slurp(dir_ / "exp.toml");
  experiment.replace(experiment.find("fm-eval"), 7, "fm-val");
  experiment.replace(experiment.find("[data]\n"), 7, "[data]\nval_fraction = 0.2\n");
  std::ofstream(dir_ / "val.toml") << experiment;
  const testing::ProcessResult run = plugtrain("run val.toml");
  ASSERT_EQ(run.exit_code, 0) << run.out;
  const fs::path folder = dir_ / "runs" / "fm-val" / "version_0";
  const nlohmann::json s = read_json(folder / "summary.json");
  ASSERT_TRUE(s.contains("final_val_loss")) << s.dump();
  const nlohmann::json e = plugtrain_json("evaluate " + shell_quote(folder.string()) + " --split val --json");
  EXPECT_EQ(e["split"], "val");
  EXPECT_EQ(e["samples"].get<int>(), kTrainSamples / 5);
  const double loss = s["final_val_loss"].get<double>();
  EXPECT_NEAR(e["loss"].get<double>(), loss, 1e-6 * std::abs(loss));
  for (const auto& [name, value] : s["final_val"].items())
    EXPECT_NEAR(e["metrics"][name].get<double>(), value.get<double>(), 1e-9) << name;
}

TEST_F(EvaluatePredictTest, WhatCannotBeEvaluatedIsOneLine) {
  // No validation split in this run.
  testing::ProcessResult r = plugtrain("evaluate " + shell_quote(run_folder().string()) + " --split val");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(lines_of(r.out).size(), 1u) << r.out;
  EXPECT_NE(r.out.find("data.val_fraction"), std::string::npos) << r.out;
  // A folder that does not exist.
  r = plugtrain("evaluate runs/fm-eval/version_9");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(lines_of(r.out).size(), 1u) << r.out;
  EXPECT_NE(r.out.find("runs/fm-eval/version_9"), std::string::npos) << r.out;
  // runs/<name> instead of one of its runs.
  r = plugtrain("evaluate runs/fm-eval");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(lines_of(r.out).size(), 1u) << r.out;
  EXPECT_NE(r.out.find("version_0"), std::string::npos) << r.out;
  // A file that is not a checkpoint, without an experiment to read it as a state_dict.
  std::ofstream(dir_ / "notes.ckpt") << "not a checkpoint\n";
  r = plugtrain("evaluate notes.ckpt");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(lines_of(r.out).size(), 1u) << r.out;
  EXPECT_NE(r.out.find("notes.ckpt: not a plugtrain checkpoint"), std::string::npos) << r.out;
}

TEST_F(EvaluatePredictTest, PredictNamesTheClassesEvaluateFound) {
  const nlohmann::json classes = read_json(run_folder() / "classes.json");
  const std::vector<std::string> names = classes["classes"].get<std::vector<std::string>>();
  ASSERT_EQ(names.size(), 10u);
  // The first test images, which are the first samples of the run's test subset, as PNG files.
  const at::Tensor images = data::read_idx(testing::fashion_mnist_dir() / "t10k-images-idx3-ubyte.gz");
  constexpr int kImages = 12;
  std::string paths;
  for (int i = 0; i < kImages; ++i) {
    data::Image image{28, 28, 1, {}};
    const at::Tensor item = images[i].contiguous();
    const std::uint8_t* pixels = item.data_ptr<std::uint8_t>();
    image.pixels.assign(pixels, pixels + 28 * 28);
    data::write_png_file(dir_ / ("item" + std::to_string(i) + ".png"), image);
    paths += " item" + std::to_string(i) + ".png";
  }
  ASSERT_EQ(plugtrain("evaluate " + shell_quote(run_folder().string()) + " --json", false).exit_code, 0);
  const std::vector<std::string> evaluated =
      lines_of(testing::slurp(run_folder() / "evaluate" / "test" / "predictions.csv"));
  ASSERT_GT(evaluated.size(), std::size_t(kImages));

  const nlohmann::json predicted = plugtrain_json("predict " + shell_quote(run_folder().string()) + paths + " --json");
  ASSERT_EQ(predicted.size(), std::size_t(kImages)) << predicted.dump();
  const std::set<std::string> known(names.begin(), names.end());
  for (int i = 0; i < kImages; ++i) {
    const nlohmann::json& top = predicted[std::size_t(i)]["top"];
    EXPECT_EQ(predicted[std::size_t(i)]["image"], "item" + std::to_string(i) + ".png");
    ASSERT_EQ(top.size(), 5u);
    double sum = 0, previous = 1;
    for (const nlohmann::json& c : top) {
      EXPECT_TRUE(known.count(c["class"].get<std::string>())) << c.dump();
      const double p = c["probability"].get<double>();
      EXPECT_LE(p, previous + 1e-12);
      previous = p;
      sum += p;
    }
    EXPECT_LE(sum, 1 + 1e-6);
    // evaluate's row for the same sample: index,label,label_name,predicted,predicted_name,probability
    const std::vector<std::string> row = fields_of(evaluated[std::size_t(i) + 1]);
    ASSERT_EQ(row.size(), 6u);
    EXPECT_EQ(top[0]["class"].get<std::string>(), row[4]) << "image " << i;
    EXPECT_NEAR(top[0]["probability"].get<double>(), std::stod(row[5]), 1e-4) << "image " << i;
  }
  // The text form: one line per image, its top-k classes with their probabilities.
  const testing::ProcessResult text =
      plugtrain("predict " + shell_quote(run_folder().string()) + " item0.png --top-k 3", false);
  ASSERT_EQ(text.exit_code, 0) << text.out;
  const std::vector<std::string> lines = lines_of(text.out);
  ASSERT_EQ(lines.size(), 1u) << text.out;
  EXPECT_EQ(lines[0].rfind("item0.png: " + predicted[0]["top"][0]["class"].get<std::string>() + " ", 0), 0u)
      << text.out;
  EXPECT_EQ(fields_of(lines[0]).size(), 3u) << text.out;
}

TEST_F(EvaluatePredictTest, PredictNamesABadImageInOneLine) {
  testing::ProcessResult r = plugtrain("predict " + shell_quote(run_folder().string()) + " missing.png");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(lines_of(r.out).size(), 1u) << r.out;
  EXPECT_NE(r.out.find("missing.png"), std::string::npos) << r.out;
  std::ofstream(dir_ / "broken.png") << "not an image";
  r = plugtrain("predict " + shell_quote(run_folder().string()) + " broken.png");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(lines_of(r.out).size(), 1u) << r.out;
  EXPECT_NE(r.out.find("broken.png"), std::string::npos) << r.out;
}

}  // namespace evaluate_predict_test
}  // namespace plugtrain
