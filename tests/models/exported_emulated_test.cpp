// Exported models on the emulated device (examples/plugins/emulated_accelerator, a PrivateUse1
// device with a CPU fallback): torchvision's resnet18 and the twins' GPT, exported with
// python/export_model.py, trained by `plugtrain run` on the CPU and on the emulated device, take
// the same steps: each step's loss (metrics.csv, every step logged, 9 digits) and the test loss
// after them.
//
// Why the tolerance (kSameArithmetic, as tests/backends/emulated_accelerator_test.cpp): the
// emulated device runs the CPU's own kernels on copies of the same tensors, in the same layout,
// so both sides do the same float32 arithmetic in the same order, once the three things that
// would make the kernels differ are set alike (the optimizer's form: foreach; the memory format:
// contiguous; dropout: the models here have none). A fourth for exported graphs: the graph pass's
// fused kernels (plugins/exported/graph_fusion.h) are the CPU's only, and off it a fused node runs
// the nodes it replaced. So the GPT is compared with the pass off on both sides, and then on the
// emulated device with the pass on and off, which must agree bitwise: there the pass changes no
// arithmetic at all (the nodes it drops gave back their input). Compared after a few steps, not
// epochs: training amplifies any last-bit difference.
// ctest-label: e2e
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/emulated_runs.h"
#include "support/experiment_toml.h"
#include "support/faults.h"
#include "support/metrics_csv.h"
#include "support/run_process.h"

namespace plugtrain::exported_emulated_test {

namespace fs = std::filesystem;

constexpr double kSameArithmetic = 1e-6;  // relative: 8 float32 ulps, the last bits of a threaded reduction

const char* kSameKernels =
    " --set optim.impl=\\\"foreach\\\" --set train.memory_format=\\\"contiguous\\\" --set train.log_interval=1";

class ExportedOnTheEmulatedDevice : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::scratch_dir("exported_emulated"); }
  void TearDown() override { fs::remove_all(dir_); }

  void export_model(const std::string& spec_and_args) const {
    const auto r =
        testing::run_process("cd " + testing::shell_quote(dir_.string()) + " && " + PLUGTRAIN_PYTHON +
                             " " PLUGTRAIN_SOURCE_DIR "/python/export_model.py " + spec_and_args + " --out model.pt2");
    ASSERT_EQ(r.exit_code, 0) << r.out;
  }
  // Trains `steps` steps of exp.toml on `backend` (one version_N each, in call order).
  void train(const std::string& backend, int steps, const std::string& sets = "") const {
    const auto r = testing::run_process(
        testing::emulated_command(dir_, "run exp.toml --set backend.name=\\\"" + backend + "\\\"" + kSameKernels +
                                            " --set train.max_steps=" + std::to_string(steps) + sets));
    ASSERT_EQ(r.exit_code, 0) << r.out;
  }
  // torchvision's resnet18 exported, and exp.toml training it on `train_size` synthetic samples.
  void resnet18_experiment(int train_size) {
    name_ = "resnet";
    export_model("torchvision:resnet18 --input 3x32x32 --args '{\"num_classes\": 10}'");
    testing::ExperimentToml("resnet")
        .set("experiment.seed", 2)
        .set_keys("model", {{"name", "exported"}, {"file", "model.pt2"}})
        .set_keys("data", {{"dataset", "synthetic"},
                           {"synthetic_shape", {3, 32, 32}},
                           {"synthetic_classes", 10},
                           {"synthetic_train_size", train_size},
                           {"synthetic_test_size", 40},
                           {"batch_size", 32}})
        .set_keys("optim", {{"name", "sgd"}, {"lr", 0.05}, {"momentum", 0.9}})
        .set("train.epochs", 1)
        .write(dir_ / "exp.toml");
  }
  // The twins' GPT exported, and exp.toml training it on 64 windows of 16 random tokens.
  void gpt_experiment() {
    name_ = "gpt";
    export_model(PLUGTRAIN_SOURCE_DIR
                 "/python/transformer_twins.py:GPT --input 16 --dtype int64 --vocab 64 --args "
                 "'{\"vocab\": 64, \"context\": 16, \"n_layer\": 2, \"n_head\": 2, \"n_embd\": 32}'");
    fs::create_directories(dir_ / "tokens");
    std::mt19937 rng(5);
    for (const char* split : {"train.bin", "val.bin"}) {
      std::ofstream out(dir_ / "tokens" / split, std::ios::binary);
      for (int i = 0; i < 64 * 16; ++i) out.put(char(rng() % 64)).put(char(0));  // uint16 ids
    }
    std::ofstream(dir_ / "tokens" / "meta.json") << R"({"vocab_size": 64})";
    testing::ExperimentToml("gpt")
        .set("experiment.seed", 1)
        .set_keys("model", {{"name", "exported"}, {"file", "model.pt2"}})
        .set("task.name", "language_model")
        .set_keys("data", {{"dataset", "tokens"}, {"path", "tokens"}, {"batch_size", 8}})
        .set("dataset.context", 16)
        .set_keys("optim", {{"name", "adamw"}, {"lr", 1e-3}})
        .set("train.epochs", 1)
        .write(dir_ / "exp.toml");
  }

  fs::path version(int n) const { return dir_ / "runs" / name_ / ("version_" + std::to_string(n)); }
  nlohmann::json summary(int n) const { return testing::run_summary(dir_, name_, n); }

  // Versions a and b took the same steps within kSameArithmetic; prints the largest difference.
  void expect_same_steps(int a, int b, int steps) const {
    const std::vector<double> x = testing::step_losses(version(a)), y = testing::step_losses(version(b));
    ASSERT_EQ(x.size(), std::size_t(steps));
    ASSERT_EQ(y.size(), x.size());
    double largest = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      largest = std::max(largest, std::abs(x[i] - y[i]) / std::abs(x[i]));
      EXPECT_LE(std::abs(x[i] - y[i]), kSameArithmetic * std::abs(x[i]))
          << "step " << i + 1 << ": " << x[i] << " vs " << y[i];
    }
    const double test_a = summary(a)["final_test_loss"], test_b = summary(b)["final_test_loss"];
    EXPECT_LE(std::abs(test_a - test_b), kSameArithmetic * std::abs(test_a)) << test_a << " vs " << test_b;
    std::printf(
        "[ %s ] version_%d and version_%d, %d steps: largest relative difference of a step's loss %.2g, test "
        "loss %.9g against %.9g\n",
        name_.c_str(), a, b, steps, largest, test_a, test_b);
  }

  fs::path dir_;
  std::string name_;
};

TEST_F(ExportedOnTheEmulatedDevice, Resnet18TakesTheCpusSteps) {
  // 40 samples a batch of 32: both epoch steps (32 and 8 samples, the dynamic batch), then the
  // test through batch norm's running statistics.
  resnet18_experiment(40);
  train("cpu", 2);
  train("emulated", 2);
  EXPECT_EQ(summary(1)["device"], "emu:0");
  expect_same_steps(0, 1, 2);
}

TEST_F(ExportedOnTheEmulatedDevice, GptTakesTheCpusStepsAndTheGraphPassChangesNothingThere) {
  gpt_experiment();
  train("cpu", 3, " --set model.fused=false");
  train("emulated", 3, " --set model.fused=false");
  train("emulated", 3);
  EXPECT_EQ(summary(2)["device"], "emu:0");
  expect_same_steps(0, 1, 3);
  EXPECT_EQ(testing::step_loss_texts(version(1)), testing::step_loss_texts(version(2)))
      << "on the emulated device the graph pass changed the arithmetic";
  EXPECT_EQ(summary(1)["final_test_loss"], summary(2)["final_test_loss"]);
}

// Exported models with recorded steps (train.graphs), on the graph-recording test backend that
// stands in for CUDA graphs on any machine (tests/test_plugins/graph_recorder_backend.cpp: the
// CPU device, its "graph" reruns the recorded work): 3 eager warm-ups, then the recording is
// replayed on the static inputs, with the graph pass's fused kernels and batch norm's running
// statistics, and every step's loss is the eager CPU run's text for text (the same kernels on
// the same values: the recording adds only the copies into its inputs). fused: the optimizer
// form a recording needs, on both sides.
class ExportedWithRecordedSteps : public ExportedOnTheEmulatedDevice {
 protected:
  void train_recorded(bool graphs, int steps) const {
    const auto r = testing::run_process(testing::plugtrain_command(
        "run exp.toml --set backend.name=\\\"graphrec\\\" --set optim.impl=\\\"fused\\\" --set train.log_interval=1 "
        "--set train.max_steps=" +
            std::to_string(steps) + " --set train.graphs=" + (graphs ? "true" : "false") +
            testing::faults::test_plugin("graph_recorder"),
        "", dir_));
    ASSERT_EQ(r.exit_code, 0) << r.out;
    if (graphs) EXPECT_NE(r.out.find("device: graphs on"), std::string::npos) << r.out;
  }
  void expect_replayed_like_eager(int steps) const {
    EXPECT_EQ(summary(0)["graph_replays"], 0);
    EXPECT_EQ(summary(1)["graph_replays"], steps - 3) << "3 warm-ups, then every step replayed";
    EXPECT_EQ(testing::step_loss_texts(version(0)), testing::step_loss_texts(version(1)));
    EXPECT_EQ(summary(0)["final_test_loss"], summary(1)["final_test_loss"]);
  }
};

TEST_F(ExportedWithRecordedSteps, Resnet18ReplaysTheEagerSteps) {
  resnet18_experiment(192);  // 6 full batches
  train_recorded(false, 6);
  train_recorded(true, 6);
  expect_replayed_like_eager(6);
}

TEST_F(ExportedWithRecordedSteps, GptWithTheGraphPassReplaysTheEagerSteps) {
  gpt_experiment();  // 64 windows of 8: 8 full batches
  train_recorded(false, 6);
  train_recorded(true, 6);
  expect_replayed_like_eager(6);
}

}  // namespace plugtrain::exported_emulated_test
