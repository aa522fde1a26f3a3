// The host never waits for the device inside a training step: on the emulated accelerator, which
// counts every wait a real device's host would make (a value read, a copy to the host, a
// blocking copy to the device, a synchronisation, an operator whose result size depends on the
// data; examples/plugins/emulated_accelerator/host_waits.cpp), every task and model family CI
// trains runs its steady steps (summary.json "host_syncs") without one. Logged steps read the
// loss and epochs read their sums: those are counted apart, and an evaluation reads once, not per
// batch. What must read every step (CTC's lengths) is counted and said once.
// ctest-label: e2e
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/emulated_runs.h"
#include "support/experiment_toml.h"
#include "support/run_process.h"

namespace plugtrain {
namespace host_syncs_test {

using testing::run_process;
using testing::slurp;
namespace fs = std::filesystem;

using Keys = std::vector<std::pair<std::string, testing::TomlValue>>;

// A family's task and model, and what it changes in the data, in [train] and in other tables
// ("table.key") of the base run.
struct Family {
  std::string name, task;
  Keys model, data = {}, train = {}, other = {};
};

// One epoch of 480 synthetic 16x16 samples of 5 classes in batches of 24, Adam, logged every 10 steps.
std::string experiment(const Family& f, const std::string& backend = "emulated") {
  testing::ExperimentToml e = testing::ExperimentToml::synthetic("syncs")
                                  .set("experiment.seed", 5)
                                  .set("backend.name", backend)
                                  .unset("model")
                                  .set_keys("model", f.model)
                                  .set("task.name", f.task)
                                  .set("data.synthetic_shape", {1, 16, 16})
                                  .set("data.synthetic_classes", 5)
                                  .set("data.synthetic_train_size", 480)
                                  .set("data.synthetic_test_size", 100)
                                  .set("data.batch_size", 24)
                                  .set_keys("data", f.data)
                                  .unset("optim")
                                  .set("optim.name", "adam")
                                  .set("optim.lr", 0.002)
                                  .set("train.epochs", 1)
                                  .set("train.log_interval", 10)
                                  .set_keys("train", f.train);
  for (const auto& [key, value] : f.other) e.set(key, value);
  return e.text();
}

void PrintTo(const Family& f, std::ostream* out) { *out << f.name; }  // names the case in ctest's list

const Keys kMlp = {{"name", "mlp"}, {"hidden", {32}}};

class HostSyncTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::scratch_dir("host_syncs"); }
  void TearDown() override { fs::remove_all(dir_); }

  testing::ProcessResult run(const std::string& toml, const std::string& args = "") {
    std::ofstream(dir_ / "exp.toml") << toml;
    return run_process(testing::emulated_command(dir_, "run exp.toml " + args));
  }
  nlohmann::json summary(int n) const { return testing::run_summary(dir_, "syncs", n); }

  fs::path dir_;
};

class EveryFamily : public HostSyncTest, public ::testing::WithParamInterface<Family> {};

TEST_P(EveryFamily, TrainsItsSteadyStepsWithoutTheHostWaitingForTheDevice) {
  const testing::ProcessResult r = run(experiment(GetParam()));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json syncs = summary(0)["host_syncs"];
  ASSERT_TRUE(syncs.is_object()) << "the emulated device counts its host waits";
  EXPECT_GE(syncs["steady_steps"].get<int>(), 10) << syncs.dump();
  EXPECT_EQ(syncs["steady"], 0) << syncs.dump();
  EXPECT_EQ(syncs["per_step"], 0.0) << syncs.dump();
  // The logged steps and the epoch's end do read: one epoch's waits are theirs alone.
  EXPECT_GT(syncs["epoch"].get<int>(), 0) << syncs.dump();
  EXPECT_TRUE(summary(0)["step_host_reads"].empty()) << summary(0)["step_host_reads"].dump();
}

const Family kFamilies[] = {
    {"mlp", "classification", kMlp},
    {"convnet", "classification", {{"name", "convnet"}}},
    {"resnet",
     "classification",
     {{"name", "resnet18"}},
     {{"synthetic_shape", {3, 32, 32}}, {"synthetic_train_size", 104}, {"batch_size", 8}}},
    {"regression", "regression", kMlp},
    {"multilabel", "multilabel", kMlp},
    {"segmentation", "segmentation", {{"name", "unet"}, {"width", 8}, {"depth", 1}}},
    // The batches made on the host and copied over (not kept on the device), one-cycle schedule.
    {"host_batches_onecycle", "classification", kMlp, {{"on_device", false}}, {}, {{"schedule.name", "onecycle"}}},
    {"accumulated_clipped", "classification", kMlp, {}, {{"accumulate_steps", 3}, {"grad_clip", 0.5}}},
    {"ema_mixup_cutmix",
     "classification",
     {{"name", "mlp"}, {"hidden", {32}}, {"dropout", 0.1}},
     {{"mixup_alpha", 0.2}, {"cutmix_alpha", 1.0}},
     {{"ema_decay", 0.99}},
     {{"early_stopping.patience", 3}}},
    {"swa", "classification", kMlp, {}, {{"swa_start", 1}}},
};
INSTANTIATE_TEST_SUITE_P(Families, EveryFamily, ::testing::ValuesIn(kFamilies),
                         [](const auto& info) { return info.param.name; });

TEST_F(HostSyncTest, TheLanguageModelTrainsItsSteadyStepsWithoutWaiting) {
  std::string text;
  for (int i = 0; i < 600; ++i) text += (i % 7 ? "jargon " : "hack ");
  std::ofstream(dir_ / "text.txt") << text;
  const testing::ProcessResult r =
      run(testing::ExperimentToml("syncs")
              .set("experiment.seed", 5)
              .set("backend.name", "emulated")
              .set_keys("model", {{"name", "gpt"}, {"layers", 1}, {"heads", 2}, {"width", 16}})
              .set("task.name", "language_model")
              .set_keys("data", {{"dataset", "text"}, {"path", "text.txt"}, {"batch_size", 8}})
              .set("dataset.context", 16)
              .set_keys("optim", {{"name", "adamw"}, {"lr", 3e-3}, {"decay", "matrices"}})
              .set_keys("schedule", {{"name", "cosine"}, {"warmup_steps", 5}})
              .set_keys("train", {{"epochs", 1}, {"steps_per_epoch", 30}, {"log_interval", 10}, {"grad_clip", 1.0}})
              .text());
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json syncs = summary(0)["host_syncs"];
  EXPECT_GE(syncs["steady_steps"].get<int>(), 20) << syncs.dump();
  EXPECT_EQ(syncs["steady"], 0) << syncs.dump();
}

// The counter is not blind: a task that reads every step is counted with its causes, and the
// run says why once, before training.
TEST_F(HostSyncTest, ATaskThatReadsEveryStepIsCountedAndSaysWhyOnce) {
  const testing::ProcessResult r =
      run(experiment({"sequence", "sequence", {{"name", "crnn"}, {"channels", {8, 16}}, {"hidden", 16}}}));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json s = summary(0), syncs = s["host_syncs"];
  EXPECT_GE(syncs["per_step"].get<double>(), 1.0) << syncs.dump();
  EXPECT_GT(syncs["steady_causes"].value("copy to the host", 0), 0) << syncs.dump();
  ASSERT_EQ(s["step_host_reads"].size(), 1u) << s.dump();
  const std::string why = s["step_host_reads"][0];
  EXPECT_NE(why.find("task 'sequence'"), std::string::npos) << why;
  const std::string line = "device: every step waits for the host: " + why;
  const std::size_t first = r.out.find(line);
  EXPECT_NE(first, std::string::npos) << r.out;
  EXPECT_EQ(r.out.find(line, first + 1), std::string::npos) << "said once";
}

TEST_F(HostSyncTest, SkippingNonfiniteStepsReadsEachStepsCheckAndSaysSo) {
  const testing::ProcessResult r =
      run(experiment({"skip", "classification", kMlp, {}, {{"on_nonfinite", "skip_step"}}}));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json s = summary(0);
  EXPECT_EQ(s["host_syncs"]["per_step"], 1.0) << s["host_syncs"].dump();
  EXPECT_GT(s["host_syncs"]["steady_causes"].value("aten::_local_scalar_dense", 0), 0) << s["host_syncs"].dump();
  ASSERT_EQ(s["step_host_reads"].size(), 1u);
  EXPECT_NE(s["step_host_reads"][0].get<std::string>().find("train.on_nonfinite"), std::string::npos);
}

TEST_F(HostSyncTest, AnEvaluationReadsItsSumsOnceWhateverItsNumberOfBatches) {
  const Family mlp{"mlp", "classification", kMlp};
  ASSERT_EQ(run(experiment(mlp), "--set data.test_batch_size=100").exit_code, 0);  // 1 test batch
  ASSERT_EQ(run(experiment(mlp), "--set data.test_batch_size=5").exit_code, 0);    // 20 test batches
  const auto evaluation = [&](int n) { return summary(n)["epochs"][0]["host_syncs"]["evaluation"].get<int>(); };
  EXPECT_GT(evaluation(0), 0);
  EXPECT_EQ(evaluation(1), evaluation(0));
}

TEST_F(HostSyncTest, ABackendThatCannotCountReportsNoFigure) {
  const testing::ProcessResult r = run(experiment({"mlp", "classification", kMlp}, "cpu"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(summary(0)["host_syncs"].is_null());
  EXPECT_TRUE(summary(0)["epochs"][0]["host_syncs"].is_null());
}

}  // namespace host_syncs_test
}  // namespace plugtrain
