// The device paths of `plugtrain run` on a device that is not the CPU: the emulated accelerator
// of examples/plugins/emulated_accelerator, a PrivateUse1 device LibTorch does not know, with its
// own memory pool and a CPU fallback for most operators. Each case runs on the CPU and on the
// emulated device (EmulatedDeviceTest/<case>/{cpu,emulated}): a tensor left on the wrong device,
// or a device value read where the host should not, fails here. Two devices (dp, ddp) are the
// emulated device's only; its memory capacity, fallbacks and PrivateUse1 itself are tested in
// emulated_accelerator_test.cpp.
// ctest-label: e2e
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/background_run.h"
#include "support/emulated_runs.h"
#include "support/experiment_toml.h"
#include "support/run_process.h"

namespace plugtrain {
namespace emulated_device_test {

using testing::run_process;
using testing::shell_quote;
using testing::slurp;
namespace fs = std::filesystem;

// An MLP with dropout on 2000 synthetic samples, Adam, two epochs that log every 10 steps.
const testing::ExperimentToml kExperiment = testing::ExperimentToml::synthetic("dev")
                                                .set("experiment.seed", 3)
                                                .set("model.hidden", {64})
                                                .set("model.dropout", 0.1)
                                                .set("data.synthetic_train_size", 2000)
                                                .set("data.synthetic_test_size", 400)
                                                .unset("optim")
                                                .set("optim.name", "adam")
                                                .set("optim.lr", 0.002)
                                                .set("train.epochs", 2)
                                                .set("train.log_interval", 10);

class DeviceRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::scratch_dir("device");
    kExperiment.write(dir_ / "exp.toml");
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string command(const std::string& args, const std::string& env = "") const {
    return testing::emulated_command(dir_, args, env);
  }
  testing::ProcessResult plugtrain(const std::string& args, const std::string& env = "") const {
    return run_process(command(args, env));
  }
  testing::ProcessResult run_on(const std::string& backend, const std::string& args = "", const std::string& env = "") {
    return plugtrain("run exp.toml --set backend.name=\\\"" + backend + "\\\" " + args, env);
  }
  fs::path version(int n) const { return dir_ / "runs" / "dev" / ("version_" + std::to_string(n)); }
  nlohmann::json summary(int n) const { return testing::run_summary(dir_, "dev", n); }
  std::string exported(int n) {
    const fs::path out = dir_ / ("export-" + std::to_string(n) + ".pt");
    auto r = plugtrain("export " + shell_quote((version(n) / "checkpoints" / "last.ckpt").string()) + " " +
                       shell_quote(out.string()));
    EXPECT_EQ(r.exit_code, 0) << r.out;
    return slurp(out);
  }
  fs::path dir_;
};

// The same cases on the CPU and on the emulated device.
class EmulatedDeviceTest : public DeviceRunTest, public ::testing::WithParamInterface<std::string> {
 protected:
  const std::string& backend() const { return GetParam(); }
  std::string device() const { return backend() == "cpu" ? "cpu" : "emu:0"; }
  testing::ProcessResult run(const std::string& args = "", const std::string& env = "") {
    return run_on(backend(), args, env);
  }
};

TEST_P(EmulatedDeviceTest, TrainsOnItsDeviceAndAnInterruptedRunResumesMidEpochExactly) {
  // 200 steps an epoch, each logged (which changes no weight): the output's pipe then holds the
  // interrupted run to at most a page (~75 steps) past the line the test waits for.
  const std::string longer = "--set data.synthetic_train_size=10000 --set train.log_interval=1 ";
  auto whole = run(longer);  // version_0, the reference
  ASSERT_EQ(whole.exit_code, 0) << whole.out;
  EXPECT_NE(whole.out.find("device: " + device() + " "), std::string::npos) << whole.out;
  EXPECT_EQ(summary(0)["device"], device());
  EXPECT_GT(summary(0)["final_test_accuracy"].get<double>(), 0.5) << summary(0).dump();

  // version_1: SIGINT once epoch 2 is under way; it finishes the step and writes a checkpoint.
  testing::BackgroundRun interrupted(command("run exp.toml --set backend.name=\\\"" + backend() + "\\\" " + longer));
  ASSERT_TRUE(interrupted.wait_for("epoch 2 step 5/")) << interrupted.out();
  ASSERT_TRUE(interrupted.signal(SIGINT));
  const testing::ProcessResult stopped = interrupted.finish();
  EXPECT_EQ(stopped.exit_code, 130) << stopped.out;
  ASSERT_NE(stopped.out.find("interrupted (SIGINT received): checkpoint"), std::string::npos) << stopped.out;
  ASSERT_EQ(stopped.out.find("epoch 2/2"), std::string::npos) << "it should have stopped inside epoch 2";
  auto resumed = run(longer + "--resume last");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out;
  EXPECT_TRUE(exported(0) == exported(1)) << "an interrupted and resumed run differs from the whole run\n"
                                          << resumed.out;
}

TEST_P(EmulatedDeviceTest, DataKeptOnTheDeviceTrainsAsTheHostLoaderDoes) {
  ASSERT_EQ(run("--set data.on_device=false").exit_code, 0);
  auto kept = run("--set data.on_device=true");
  ASSERT_EQ(kept.exit_code, 0) << kept.out;
  EXPECT_EQ(summary(1)["device"], device());
  EXPECT_TRUE(exported(0) == exported(1)) << "data on the device trained other weights\n" << kept.out;
}

// faultnet (tests/test_plugins/fault_models.cpp) runs out of memory above 25 samples from its third
// call on, wherever it runs: the step is retried with half the batch.
TEST_P(EmulatedDeviceTest, OutOfMemoryFromTheModelHalvesTheBatch) {
  testing::ExperimentToml(kExperiment)
      .unset("model")
      .set("model.name", "faultnet")
      .set("model.max_batch", 25)
      .set("model.from_call", 3)
      .write(dir_ / "exp.toml");
  auto r = plugtrain("run exp.toml --set backend.name=\\\"" + backend() + "\\\"" +
                     testing::faults::test_plugin("fault_models"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json halvings = summary(0)["batch_halvings"];
  ASSERT_EQ(halvings.size(), 1u) << r.out;
  EXPECT_EQ(halvings[0]["epoch"], 1) << halvings.dump();
  EXPECT_EQ(halvings[0]["step"], 3) << halvings.dump();
  EXPECT_EQ(halvings[0]["from"], 50) << halvings.dump();
  EXPECT_EQ(summary(0)["step_batch"], 25);
  EXPECT_EQ(summary(0)["epochs"][1]["samples"], 2000) << "no sample lost or trained twice";
}

TEST_P(EmulatedDeviceTest, GraphsAreRefusedWithTheBackendsReason) {
  auto r = run("--set train.graphs=true");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("train.graphs"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("does not record device graphs"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(version(0))) << "refused before any run folder";
}

TEST_P(EmulatedDeviceTest, TwoDevicesTrainWithDpAndDdp) {
  if (backend() == "cpu") GTEST_SKIP() << "the CPU has one device (its dp and ddp are tested elsewhere)";
  const std::string two = "PLUGTRAIN_EMU_DEVICES=2";
  auto dp = run("--set backend.devices=2 --set backend.strategy=\\\"dp\\\"", two);
  ASSERT_EQ(dp.exit_code, 0) << dp.out;
  EXPECT_EQ(summary(0)["plan"]["strategy"], "dp");
  EXPECT_EQ(summary(0)["plan"]["devices"], nlohmann::json({"emu:0", "emu:1"}));
  EXPECT_EQ(summary(0)["device"], "emu:0");
  auto ddp = run("--set backend.devices=2 --set backend.strategy=\\\"ddp\\\"", two);
  ASSERT_EQ(ddp.exit_code, 0) << ddp.out;
  EXPECT_NE(ddp.out.find("gloo-staged"), std::string::npos) << ddp.out;
  EXPECT_EQ(summary(1)["world_size"], 2);
  EXPECT_GT(summary(1)["final_test_accuracy"].get<double>(), 0.5) << summary(1).dump();
}

INSTANTIATE_TEST_SUITE_P(Devices, EmulatedDeviceTest, ::testing::Values("cpu", "emulated"),
                         [](const auto& info) { return info.param; });

}  // namespace emulated_device_test
}  // namespace plugtrain
