// Exported timm models through `plugtrain run` against eager PyTorch, step by step (issue 64):
// the loader, the optimizer's form, the memory format and the threads, not the interpreter alone.
// tests/python/timm_reference.py exports each model (timm, pretrained=False, one input channel,
// seed 0) in train mode and trains it from those weights in eager PyTorch: the first 64 samples of
// Fashion-MNIST as one full batch, 10 steps of SGD (lr 0.05, momentum 0.9, weight decay 5e-4), one
// thread. plugtrain runs the .pt2 on the same files with train.threads = 1, data.shuffle = false,
// every step logged to metrics.csv. Each path is compared with eager on the same path:
//
//   contiguous_loop      PyTorch's CPU defaults: NCHW, single-tensor SGD (plugtrain's optim.impl
//                        = "loop"; "foreach" gives the loop's results bit for bit on the CPU)
//   channels_last_fused  plugtrain's defaults for a convolutional model on the CPU: channels-last
//                        (eager: model.to(memory_format=torch.channels_last)), fused SGD
//                        (torch.optim.SGD(fused=True))
//
// Both sides then call the same ATen kernels on the same tensors in the same order, and every
// logged loss agrees to the last bit (all three models, both paths: the largest difference
// printed, 4e-9, is metrics.csv's 9 significant digits against Python's double). With 2 threads
// on both sides the runs were bitwise alike too (measured by hand, not tested: one thread is the
// deterministic setting the issue asks for). Where the paths part, eager drifts from its own
// defaults; relative to the contiguous loop, per step, the worst of the three models
// (timm_reference.py --spreads):
//
//   step                           1       2       3       4       5 .. 8         9       10
//   channels-last instead of NCHW  1.8e-6  1.2e-3  3.4e-2  1.3e-1  0.11 .. 0.25   0.07    0.18
//   fused SGD instead of the loop  0       0       0       0       0 .. 8.9e-7    2.4e-5  1.9e-4
//   foreach SGD instead of loop    0 at every step (the same operations, bit for bit)
//   2 threads instead of 1         2.1e-7  8.8e-3  7.6e-3  5.6e-2  0.06 .. 0.21   0.23    0.97
//
// (fused: MobileNetV3; resnet10t is bitwise the loop for all 10 steps, regnetx_002 1.9e-7 at
// step 10.) A last-bit difference grows about tenfold per step in a full-batch run with batch
// norm. The tolerance, 1e-5, leaves room for a last-bit difference in the first steps and is
// below the channels-last and thread spreads from step 2, the fused optimizer's from step 9
// (hence 10 steps): a run that took another path than eager's fails. The test also
// asserts that the two eager paths it compares are further apart than 10 times the tolerance.
//
// Before plugtrain gave channels-last weights PyTorch's strides (core/run/device_settings.cpp,
// convert_memory_format), a 1x1 or depthwise convolution's weight kept its NCHW strides and
// MobileNetV3's squeeze-and-excitation convolutions ran in the other layout than eager's:
// 1.6e-7 off at step 1, 3.7e-5 at step 3, 0.21 at step 6 (regnetx_002 and lcnet_050 parted at
// steps 4 and 2; resnet10t, whose convolutions all see real images, did not).
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/experiment_toml.h"
#include "support/fashion_mnist.h"
#include "support/metrics_csv.h"
#include "support/run_folder.h"
#include "support/run_process.h"

namespace plugtrain::testing {
namespace timm_parity_test {

namespace fs = std::filesystem;

constexpr int kSteps = 10;
constexpr int kSamples = 64;
constexpr double kTolerance = 1e-5;

// One way through a training step, as plugtrain's keys say it; `name` is the eager run's key in
// M_losses.json and the experiment's name.
struct StepPath {
  std::string name, memory_format, optimizer_impl;
};

const std::vector<StepPath>& step_paths() {
  static const std::vector<StepPath> paths{{"contiguous_loop", "contiguous", "loop"},
                                           {"channels_last_fused", "channels_last", "fused"}};
  return paths;
}

// The run: the .pt2's own weights, the first kSamples training images in the files' order as
// one batch (normalised with the mean and std timm_reference.py uses), SGD, every step logged.
ExperimentToml experiment(const std::string& model, const StepPath& path) {
  return ExperimentToml(path.name)
      .on_cpu()
      .set("experiment.seed", 1)
      .set("model.name", "exported")
      .set("model.file", model + ".pt2")
      .set_keys("data", {{"dataset", "fashion-mnist"},
                         {"path", fashion_mnist_dir().string()},
                         {"train_subset", kSamples},
                         {"test_subset", 16},
                         {"batch_size", kSamples},
                         {"test_batch_size", 16},
                         {"shuffle", false},
                         {"mean", {0.2860}},
                         {"std", {0.3530}}})
      .set_keys(
          "optim",
          {{"name", "sgd"}, {"lr", 0.05}, {"momentum", 0.9}, {"weight_decay", 5e-4}, {"impl", path.optimizer_impl}})
      .set_keys("train",
                {{"epochs", kSteps}, {"threads", 1}, {"log_interval", 1}, {"memory_format", path.memory_format}});
}

double relative(double got, double want) { return std::abs(got - want) / std::abs(want); }

double largest_relative(const std::vector<double>& got, const std::vector<double>& want) {
  double worst = 0;
  for (std::size_t i = 0; i < std::min(got.size(), want.size()); ++i)
    worst = std::max(worst, relative(got[i], want[i]));
  return worst;
}

// The model's own folder (parameterised tests' names have slashes, so not TempDir's).
class TimmParity : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
  const fs::path dir_ = fs::temp_directory_path() / ("plugtrain-timm-" + std::to_string(::getpid()) + "-" + GetParam());
};

TEST_P(TimmParity, EveryLoggedStepIsEagerPyTorchsOnTheSamePath) {
  const std::string model = GetParam(), python = PLUGTRAIN_PYTHON;
  if (run_process(python + " -c 'import timm'").exit_code != 0)
    GTEST_SKIP() << "timm is not installed beside the torch wheel (scripts/setup installs it)";
  if (!fs::exists(fashion_mnist_dir() / "train-images-idx3-ubyte.gz"))
    GTEST_SKIP() << "no Fashion-MNIST at " << fashion_mnist_dir() << " (Debian's dataset-fashion-mnist)";
  const ProcessResult eager = run_process(
      python + " " PLUGTRAIN_SOURCE_DIR "/tests/python/timm_reference.py --out " + shell_quote(dir_.string()) +
      " --data " + shell_quote(fashion_mnist_dir().string()) + " --models " + model + " --samples " +
      std::to_string(kSamples) + " --steps " + std::to_string(kSteps) + " --threads 1");
  ASSERT_EQ(eager.exit_code, 0) << eager.out;
  const auto want = nlohmann::json::parse(slurp(dir_ / (model + "_losses.json")));
  std::vector<std::vector<double>> eager_losses;
  for (const StepPath& path : step_paths()) {
    const auto expected = want.at(path.name).get<std::vector<double>>();
    ASSERT_EQ(expected.size(), std::size_t(kSteps));
    EXPECT_LT(expected.back(), expected.front()) << model << " " << path.name << ": eager's loss should fall";
    eager_losses.push_back(expected);
    experiment(model, path).write(dir_ / "exp.toml");
    const ProcessResult run = run_process(plugtrain_command("run exp.toml", "", dir_));
    ASSERT_EQ(run.exit_code, 0) << run.out;
    const std::vector<double> losses = step_losses(run_folder(dir_, path.name, 0));
    ASSERT_EQ(losses.size(), std::size_t(kSteps)) << run.out;
    for (int step = 0; step < kSteps; ++step)
      EXPECT_LE(relative(losses[step], expected[step]), kTolerance)
          << model << " " << path.name << " step " << step + 1 << ": plugtrain " << losses[step] << ", eager "
          << expected[step];
    std::printf("%s %s: %d steps, largest relative loss difference %.2e (loss %.6f -> %.6f)\n", model.c_str(),
                path.name.c_str(), kSteps, largest_relative(losses, expected), expected.front(), expected.back());
  }
  // The two paths are further apart than the tolerance: a run that took the other path fails.
  EXPECT_GT(largest_relative(eager_losses[1], eager_losses[0]), 10 * kTolerance) << model;
}

INSTANTIATE_TEST_SUITE_P(Timm, TimmParity, ::testing::Values("resnet10t", "mobilenetv3_small_050", "regnetx_002"));

}  // namespace timm_parity_test
}  // namespace plugtrain::testing
