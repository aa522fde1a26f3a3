// Process-wide settings (run/process_settings.h): a built run changes LibTorch's threads, TF32,
// cuDNN autotuner and CPU generator, and puts them back when it goes, so that a command timing
// backend A and then backend B in one process gives B exactly what B gets alone.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <ATen/core/Generator.h>

#include "run/build.h"
#include "run/plan.h"
#include "run/validate.h"
#include "support/run_process.h"

namespace plugtrain {
namespace {

namespace fs = std::filesystem;

// What the process-wide settings are now.
struct Settings {
  int threads;
  bool tf32_matmul, tf32_convolutions, cudnn_benchmark;
  at::Tensor cpu_generator_state;

  static Settings now() {
    auto& c = at::globalContext();
    return {at::get_num_threads(), c.allowTF32CuBLAS(), c.allowTF32CuDNN(), c.benchmarkCuDNN(),
            c.defaultGenerator(c10::Device(c10::kCPU)).get_state()};
  }
  void expect_equal(const Settings& other, const std::string& when) const {
    EXPECT_EQ(threads, other.threads) << when;
    EXPECT_EQ(tf32_matmul, other.tf32_matmul) << when;
    EXPECT_EQ(tf32_convolutions, other.tf32_convolutions) << when;
    EXPECT_EQ(cudnn_benchmark, other.cudnn_benchmark) << when;
    EXPECT_TRUE(cpu_generator_state.equal(other.cpu_generator_state)) << when;
  }
};

class ProcessSettingsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::scratch_dir("settings");
    std::ofstream(dir_ / "exp.toml") << "[model]\nname = \"mlp\"\nhidden = [8]\n[data]\ndataset = \"synthetic\"\n"
                                        "synthetic_shape = [1, 4, 4]\nsynthetic_train_size = 64\nsynthetic_test_size = 16\n"
                                        "batch_size = 16\n";
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Builds a run of exp.toml on `backend` with `overrides`, trains two steps, and returns the
  // settings the run had while it trained. The run is gone when this returns.
  Settings settings_while_training(const std::string& backend, std::vector<std::string> overrides) {
    RunRequest request;
    request.experiment_file = dir_ / "exp.toml";
    request.plugin_paths = {PLUGTRAIN_PLUGIN_DIR, fs::path(PLUGTRAIN_TEST_PLUGIN_DIR) / "graph_recorder"};
    request.overrides = std::move(overrides);
    request.overrides.push_back("backend.name=\"" + backend + "\"");
    ValidatedRun run = validate(request);
    const RunPlan plan = plan_run(run, {}, std::nullopt);
    std::ostringstream quiet;
    std::unique_ptr<BuiltRun> built = build_run(run, plan, nullptr, nullptr, quiet);
    built->trainer->time_steps(2);
    return Settings::now();
  }
  fs::path dir_;
};

TEST_F(ProcessSettingsTest, BackendBAfterBackendAGetsExactlyWhatItGetsAlone) {
  const Settings before = Settings::now();
  const Settings b_alone = settings_while_training("cpu", {});
  before.expect_equal(Settings::now(), "after B alone");

  // A: another backend (an accelerator stand-in) with every process-wide setting changed.
  const Settings a = settings_while_training(
      "graphrec", {"train.threads=1", "train.tf32=true", "train.cudnn_benchmark=true", "experiment.seed=99"});
  EXPECT_EQ(a.threads, 1) << "A's own settings apply while A runs";
  EXPECT_TRUE(a.tf32_matmul);
  EXPECT_TRUE(a.cudnn_benchmark);
  before.expect_equal(Settings::now(), "after A");

  const Settings b_after_a = settings_while_training("cpu", {});
  b_alone.expect_equal(b_after_a, "B while it trains, after A");
  before.expect_equal(Settings::now(), "after A then B");
}

}  // namespace
}  // namespace plugtrain
