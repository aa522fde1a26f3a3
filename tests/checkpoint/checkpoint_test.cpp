// Durable runs end to end: exact resume, SIGINT, checkpoint policies, early stopping, run
// folder files, bad checkpoints, and weights exchanged with Python's torch.
// ctest-label: e2e
// ctest-label Crc32c: unit
// ctest-label ProfileSummary: unit
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <ATen/ATen.h>
#include <torch/serialize.h>

#include "logging/tensorboard_writer.h"
#include "support/background_run.h"
#include "support/experiment_folder.h"
#include "support/experiment_toml.h"
#include "support/run_folder.h"
#include "support/run_process.h"
#include "train/callbacks/profiler_callback.h"

namespace plugtrain {
namespace checkpoint_test {

using testing::run_process;
using testing::shell_quote;
using testing::slurp;
namespace fs = std::filesystem;

// 10 classes (the data set's default), cosine schedule after a warm-up epoch, four epochs.
const std::string kExperiment = testing::ExperimentToml::synthetic("ckpt")
                                    .set("experiment.seed", 5)
                                    .set("model.dropout", 0.2)
                                    .unset("data.synthetic_classes")
                                    .set("data.synthetic_train_size", 3000)
                                    .set("data.synthetic_test_size", 300)
                                    .unset("optim")
                                    .set("optim.name", "adam")
                                    .set("optim.lr", 0.002)
                                    .set("schedule.name", "cosine")
                                    .set("schedule.warmup_epochs", 1)
                                    .set("train.epochs", 4)
                                    .text();

class CheckpointTest : public testing::ExperimentFolderTest {
 protected:
  CheckpointTest() : ExperimentFolderTest("ckpt", kExperiment) {}
  testing::ProcessResult run(const std::string& args) { return plugtrain("run exp.toml " + args); }
  fs::path version(int n) const { return testing::run_folder(dir_, "ckpt", n); }
  nlohmann::json summary(int n) const { return testing::run_summary(dir_, "ckpt", n); }
  // The final weights of a run, as the bytes of `plugtrain export`.
  std::string exported(int n) {
    const fs::path out = dir_ / ("export-" + std::to_string(n) + ".pt");
    auto r = plugtrain("export " + shell_quote((version(n) / "checkpoints" / "last.ckpt").string()) + " " +
                       shell_quote(out.string()));
    EXPECT_EQ(r.exit_code, 0) << r.out;
    return slurp(out);
  }
  // 4 epochs in one go (version_0) against 2 epochs + --resume to 4 (version_1), same args.
  void expect_resume_is_bitwise(const std::string& args, const std::string& what) {
    ASSERT_EQ(run(args).exit_code, 0);
    ASSERT_EQ(run(args + "--set train.epochs=2").exit_code, 0);
    auto resumed = run(args + "--resume last");
    ASSERT_EQ(resumed.exit_code, 0) << resumed.out;
    EXPECT_TRUE(exported(0) == exported(1)) << what << " differs after resume";
  }
  // The weights of two checkpoints agree: bitwise on a machine like the one that wrote a stored
  // one, within float rounding elsewhere (CPU kernels round differently per processor).
  void expect_same_weights(const fs::path& a_checkpoint, const fs::path& b_checkpoint) {
    auto export_of = [&](const fs::path& ckpt, const std::string& name) {
      auto r = plugtrain("export " + shell_quote(ckpt.string()) + " " + name);
      EXPECT_EQ(r.exit_code, 0) << r.out;
      return slurp(dir_ / name);
    };
    const std::string continued = export_of(a_checkpoint, "a.pt"), own = export_of(b_checkpoint, "b.pt");
    ASSERT_FALSE(continued.empty());
    const c10::Dict<c10::IValue, c10::IValue> a =
        torch::pickle_load(std::vector<char>(continued.begin(), continued.end())).toGenericDict();
    const c10::Dict<c10::IValue, c10::IValue> b =
        torch::pickle_load(std::vector<char>(own.begin(), own.end())).toGenericDict();
    ASSERT_EQ(a.size(), b.size());
    for (const auto& item : a) {
      const at::Tensor x = item.value().toTensor(), y = b.at(item.key()).toTensor();
      EXPECT_TRUE(at::allclose(x, y, /*rtol=*/1e-5, /*atol=*/1e-6))
          << item.key().toStringRef()
          << ": the old checkpoint resumed to other weights than a fresh run (max difference "
          << (x - y).abs().max().item<double>() << ")";
    }
  }
};

TEST_F(CheckpointTest, FourEpochsEqualTwoPlusResumePlusTwoBitwise) {
  // A schedule that does not depend on the total number of epochs (cosine does, so a run
  // planned for 2 epochs and one planned for 4 follow different learning rates).
  const std::string step = "--set schedule.name=\"step\" --set schedule.step_size=1 --set schedule.gamma=0.7 ";
  ASSERT_EQ(run(step).exit_code, 0);                           // version_0: 4 epochs
  ASSERT_EQ(run(step + "--set train.epochs=2").exit_code, 0);  // version_1: 2 epochs
  auto resumed = run(step + "--resume last");                  // version_1 continued to 4
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out;
  const nlohmann::json from = summary(1)["resumed_from"];
  EXPECT_EQ(from["checkpoint"], "runs/ckpt/version_1/checkpoints/last.ckpt") << from;
  EXPECT_EQ(from["epochs_done"], 2) << from;
  EXPECT_EQ(from["steps_done"], 120) << from;
  EXPECT_EQ(summary(1)["epochs"].size(), 4u) << "the summary holds the epochs before the resume too";
  EXPECT_TRUE(summary(0)["resumed_from"].is_null());
  EXPECT_FALSE(fs::exists(version(2))) << "a resumed run continues its own folder";
  const std::string full = exported(0), split = exported(1);
  ASSERT_FALSE(full.empty());
  EXPECT_TRUE(full == split) << "weights differ after resume";
}

// tests/fixtures/checkpoint_v0.1: the first epoch of a 2-epoch run, written by plugtrain before its
// training core was reshaped. Today's plugtrain resumes it and ends with the same weights as a
// 2-epoch run of its own: bitwise on a machine like the one that wrote it, and within float
// rounding elsewhere (CPU kernels round differently per processor: an AMD EPYC differs from the
// stored epoch in the 8th digit). A resume that lost the optimizer state, the step or the data
// order would be off by far more.
TEST_F(CheckpointTest, ACheckpointWrittenBeforeTheReshapedCoreStillResumesExactly) {
  const fs::path data = fs::path(PLUGTRAIN_SOURCE_DIR) / "tests" / "fixtures" / "checkpoint_v0.1";
  fs::copy_file(data / "experiment.toml", dir_ / "old.toml");
  const fs::path old = dir_ / "runs" / "checkpoint-v0.1" / "version_0" / "checkpoints";
  fs::create_directories(old);
  fs::copy_file(data / "last.ckpt", old / "last.ckpt");
  // --no-gpu: the stored epoch is the CPU's; a GPU's kernels round differently.
  auto resumed = plugtrain("run old.toml --resume last --no-gpu");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out;
  const nlohmann::json resumed_summary = testing::run_summary(dir_, "checkpoint-v0.1", 0);
  EXPECT_EQ(resumed_summary["resumed_from"]["epochs_done"], 1) << resumed_summary["resumed_from"];
  EXPECT_EQ(resumed_summary["resumed_from"]["steps_done"], 8) << resumed_summary["resumed_from"];
  EXPECT_EQ(resumed_summary["epochs"].back()["epoch"], 2) << resumed.out;
  auto fresh = plugtrain("run old.toml --set experiment.output=fresh --no-gpu");
  ASSERT_EQ(fresh.exit_code, 0) << fresh.out;
  expect_same_weights(old / "last.ckpt",
                      dir_ / "fresh" / "checkpoint-v0.1" / "version_0" / "checkpoints" / "last.ckpt");
}

// tests/fixtures/checkpoint_flat_progress: a run interrupted (SIGINT) in the middle of its second
// epoch, written in format 1 (one flat "progress" record, before each part had its own section)
// by commit f6f5597, with early stopping and a best checkpoint. Resuming it continues inside that
// epoch: the sampler's position and the epoch's running sums come from the old record, so the
// run ends with a fresh run's weights and the interrupted epoch's figures cover all of it.
TEST_F(CheckpointTest, AnInterruptedFormat1CheckpointResumesInsideItsEpoch) {
  const fs::path data = fs::path(PLUGTRAIN_SOURCE_DIR) / "tests" / "fixtures" / "checkpoint_flat_progress";
  fs::copy_file(data / "experiment.toml", dir_ / "flat.toml");
  const fs::path run_folder = dir_ / "runs" / "checkpoint-flat-progress" / "version_0";
  fs::create_directories(run_folder / "checkpoints");
  fs::copy_file(data / "last.ckpt", run_folder / "checkpoints" / "last.ckpt");
  auto resumed = plugtrain("run flat.toml --resume last --no-gpu");  // the CPU's, as above
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out;
  const nlohmann::json from = testing::run_summary(dir_, "checkpoint-flat-progress", 0)["resumed_from"];
  EXPECT_EQ(from["epochs_done"], 1) << from;
  EXPECT_EQ(from["steps_done"], 706) << from;
  EXPECT_EQ(from["steps_into_epoch"], 206) << from;
  auto fresh = plugtrain("run flat.toml --set experiment.output=fresh --no-gpu");
  ASSERT_EQ(fresh.exit_code, 0) << fresh.out;
  const fs::path fresh_folder = dir_ / "fresh" / "checkpoint-flat-progress" / "version_0";
  expect_same_weights(run_folder / "checkpoints" / "last.ckpt", fresh_folder / "checkpoints" / "last.ckpt");
  // metrics.csv: kind,epoch,step,loss,accuracy,... The resumed epoch 2 row sums all its batches.
  auto epoch_row = [](const fs::path& csv, const std::string& epoch) {
    std::istringstream rows(slurp(csv));
    for (std::string row; std::getline(rows, row);)
      if (row.rfind("epoch," + epoch + ",", 0) == 0) {
        std::vector<std::string> fields;
        std::istringstream cells(row);
        for (std::string cell; std::getline(cells, cell, ',');) fields.push_back(cell);
        return fields;
      }
    return std::vector<std::string>{};
  };
  const auto a = epoch_row(run_folder / "metrics.csv", "2"), b = epoch_row(fresh_folder / "metrics.csv", "2");
  ASSERT_GE(a.size(), 5u) << slurp(run_folder / "metrics.csv");
  ASSERT_GE(b.size(), 5u) << slurp(fresh_folder / "metrics.csv");
  EXPECT_EQ(a[2], b[2]) << "the step at the end of epoch 2";
  EXPECT_NEAR(std::stod(a[3]), std::stod(b[3]), 1e-3) << "epoch 2's training loss";
  EXPECT_NEAR(std::stod(a[4]), std::stod(b[4]), 1e-3) << "epoch 2's training accuracy";
}

TEST_F(CheckpointTest, SigintFinishesTheStepWritesACheckpointAndResumesExactly) {
  // Every step is logged (which changes no weight): the output's pipe then holds the run to at
  // most a page (~75 steps) past the line the test waits for, well inside epoch 2's 400 steps.
  const std::string args = "--set data.synthetic_train_size=20000 --set train.epochs=3 --set train.log_interval=1";
  ASSERT_EQ(run(args).exit_code, 0);  // the uninterrupted reference, version_0
  // version_1: interrupted during epoch 2, once its 100th step is logged.
  testing::BackgroundRun interrupted(command("run exp.toml " + args));
  ASSERT_TRUE(interrupted.wait_for("epoch 2 step 100/")) << interrupted.out();
  ASSERT_TRUE(interrupted.signal(SIGINT));
  const testing::ProcessResult stopped = interrupted.finish();
  EXPECT_EQ(stopped.exit_code, 130) << "an interrupted run exits as the shell reports a Ctrl-C\n" << stopped.out;
  ASSERT_NE(stopped.out.find("interrupted (SIGINT received): checkpoint"), std::string::npos) << stopped.out;
  EXPECT_NE(stopped.out.find("resume with: plugtrain run exp.toml --resume last"), std::string::npos) << stopped.out;
  const nlohmann::json s = summary(1);
  EXPECT_TRUE(s["interrupted"].get<bool>());
  EXPECT_EQ(s["epochs"].size(), 1u) << "it should have stopped inside epoch 2: " << stopped.out;

  auto resumed = run(args + " --resume last");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out;
  EXPECT_TRUE(exported(0) == exported(1)) << "weights differ after interrupt + resume\n" << resumed.out;
}

TEST_F(CheckpointTest, RunFolderHoldsResolvedExperimentLogMetricsAndSummary) {
  // --no-gpu: on a GPU the phases are timed on fewer steps (each timed step waits for the device).
  auto r = run("--set train.log_interval=20 --no-gpu");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  for (const char* f : {"experiment.toml", "train.log", "metrics.csv", "summary.json", "checkpoints/last.ckpt"})
    EXPECT_TRUE(fs::exists(version(0) / f)) << f;
  const std::string resolved = slurp(version(0) / "experiment.toml");
  EXPECT_NE(resolved.find("hidden = [32]"), std::string::npos) << resolved;
  EXPECT_NE(resolved.find("batch_size = 50"), std::string::npos) << resolved;
  EXPECT_NE(resolved.find("test_batch_size = 1000"), std::string::npos) << "defaults are written too";
  const std::string csv = slurp(version(0) / "metrics.csv");
  EXPECT_EQ(
      csv.rfind(
          "kind,epoch,step,loss,accuracy,test_loss,test_accuracy,lr,samples_per_second,seconds,test_top5_accuracy\n",
          0),
      0u);
  int steps = 0, epochs = 0;
  std::istringstream lines(csv);
  for (std::string line; std::getline(lines, line);) {
    steps += line.rfind("step,", 0) == 0;
    epochs += line.rfind("epoch,", 0) == 0;
  }
  EXPECT_EQ(epochs, 4);
  EXPECT_EQ(steps, 12);  // 240 steps, one row every 20
  EXPECT_NE(slurp(version(0) / "train.log").find("done: final test accuracy"), std::string::npos);
  // Where each epoch's step time went, in the epoch line and in summary.json.
  EXPECT_NE(r.out.find("| data "), std::string::npos) << r.out;
  const auto summary = nlohmann::json::parse(std::ifstream(version(0) / "summary.json"));
  const auto& phases = summary["epochs"][0]["phases"];
  EXPECT_EQ(phases["timed_steps"], 60);
  double shares = 0;
  for (const char* p : {"data", "copy", "fwd", "bwd", "opt", "other"}) shares += phases[p]["share"].get<double>();
  EXPECT_NEAR(shares, 1.0, 1e-9);
  ASSERT_EQ(run("").exit_code, 0);
  EXPECT_TRUE(fs::exists(version(1) / "summary.json")) << "a second run gets the next version";
}

TEST_F(CheckpointTest, ProfileWritesAChromeTraceAndTheTopOperators) {
  auto r = run("--set train.epochs=1 --profile --profile-steps 4");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("profile: recording 4 steps"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("profile: top operators by self CPU time"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("aten::"), std::string::npos) << r.out;
  const fs::path trace = version(0) / "profile" / "trace.json";
  ASSERT_TRUE(fs::exists(trace)) << r.out;
  const auto j = nlohmann::json::parse(std::ifstream(trace));
  ASSERT_TRUE(j.contains("traceEvents"));
  int ops = 0;
  for (const auto& e : j["traceEvents"]) ops += e.value("name", "").rfind("aten::", 0) == 0;
  EXPECT_GT(ops, 10) << "LibTorch operators in the trace";
}

// Names as the H200's profile of the convnet step printed them, cut at 40 characters before.
TEST(ProfileSummary, KernelNamesKeepTheNameAloneWithoutTemplatesOrLibTorchsNamespaces) {
  EXPECT_EQ(short_kernel_name("void at::native::(anonymous namespace)::fused_dropout_kernel_vec<float, float, unsigned "
                              "int, 1, 4, bool>(at::cuda::detail::TensorInfo<float, unsigned int>, float)"),
            "fused_dropout_kernel_vec");
  EXPECT_EQ(short_kernel_name("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, "
                              "at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::"
                              "operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4, 4>>("
                              "at::native::ReduceOp<float, int>)"),
            "reduce_kernel");
  EXPECT_EQ(
      short_kernel_name("void wgrad_alg0_engine<float, 128, 5, 5, 3, 3, 3, false, 512>(int, int, int, float const*)"),
      "wgrad_alg0_engine");
  EXPECT_EQ(
      short_kernel_name("sm80_xmma_gemm_f32f32_f32f32_f32_nt_n_tilesize32x32x8_stage3_warpsize1x2x1_ffma_aligna4"),
      "sm80_xmma_gemm_f32f32_f32f32_f32_nt_n_tilesize32x32x8_stage3_warpsize1x2x1_ffma_aligna4");
  EXPECT_EQ(short_kernel_name("_ZN7cutlass6KernelIiEEvT_"), "cutlass::Kernel") << "demangled first";
  EXPECT_EQ(short_kernel_name("Memcpy HtoD (Pageable -> Device)"), "Memcpy HtoD (Pageable -> Device)");
}

TEST_F(CheckpointTest, SaveEveryKeepsTheLastKAndBestFollowsTheMonitor) {
  ASSERT_EQ(run("--set checkpoint.save=\"every\" --set checkpoint.keep_last=2").exit_code, 0);
  EXPECT_FALSE(fs::exists(version(0) / "checkpoints" / "epoch-0002.ckpt"));
  EXPECT_TRUE(fs::exists(version(0) / "checkpoints" / "epoch-0003.ckpt"));
  EXPECT_TRUE(fs::exists(version(0) / "checkpoints" / "epoch-0004.ckpt"));
  EXPECT_TRUE(fs::exists(version(0) / "checkpoints" / "last.ckpt"));
  ASSERT_EQ(run("--set checkpoint.save=\"best\" --set checkpoint.monitor=\"train_loss\"").exit_code, 0);
  EXPECT_TRUE(fs::exists(version(1) / "checkpoints" / "best.ckpt"));
  ASSERT_EQ(run("--set checkpoint.save=\"none\"").exit_code, 0);
  EXPECT_FALSE(fs::exists(version(2) / "checkpoints"));
}

TEST_F(CheckpointTest, EarlyStoppingStopsWhenTheMonitorStallsAndSaysWhy) {
  // Test accuracy reaches 1.0 on this set within a few epochs and cannot improve after.
  auto r = run("--set train.epochs=40 --set early_stopping.patience=2");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json s = summary(0);
  EXPECT_TRUE(s["stopped_early"].get<bool>()) << r.out;
  EXPECT_LT(s["epochs"].size(), 40u) << r.out;
  // The reason, once (its wording is what a user reads in the log and summary.json alike).
  EXPECT_EQ(s["stop_reason"].get<std::string>().rfind("early stopping: test_accuracy did not improve for 2 evaluated "
                                                      "epochs",
                                                      0),
            0u)
      << s["stop_reason"];
}

TEST_F(CheckpointTest, BadCheckpointsGiveOneLineErrors) {
  std::ofstream(dir_ / "garbage.ckpt") << "this is not a checkpoint";
  auto garbage = run("--resume garbage.ckpt");
  EXPECT_EQ(garbage.exit_code, 1);
  EXPECT_NE(garbage.out.find("garbage.ckpt: not a readable checkpoint (corrupt or truncated?)"), std::string::npos)
      << garbage.out;

  ASSERT_EQ(run("").exit_code, 0);
  const std::string whole = slurp(version(0) / "checkpoints" / "last.ckpt");
  std::ofstream(dir_ / "truncated.ckpt", std::ios::binary) << whole.substr(0, whole.size() / 2);
  auto truncated = run("--resume truncated.ckpt");
  EXPECT_EQ(truncated.exit_code, 1);
  EXPECT_NE(truncated.out.find("truncated.ckpt: not a readable checkpoint"), std::string::npos) << truncated.out;

  auto missing = run("--resume nowhere.ckpt");
  EXPECT_NE(missing.out.find("nowhere.ckpt: no such checkpoint file"), std::string::npos) << missing.out;

  testing::ExperimentToml("ckpt")
      .set("model.name", "lenet5")
      .set("data.dataset", "synthetic")
      .set("data.synthetic_shape", {1, 28, 28})
      .write(dir_ / "lenet.toml");
  auto other_model =
      plugtrain("run lenet.toml --resume " + shell_quote((version(0) / "checkpoints" / "last.ckpt").string()));
  EXPECT_EQ(other_model.exit_code, 1);
  EXPECT_NE(other_model.out.find("written for model 'mlp', this experiment trains 'lenet5'"), std::string::npos)
      << other_model.out;
  EXPECT_EQ(std::count(other_model.out.begin(), other_model.out.end(), '\n'), 1) << other_model.out;
}

#ifdef PLUGTRAIN_PYTHON
// Both directions with the Python torch of the same wheel.
TEST_F(CheckpointTest, WeightsGoToAndComeFromPythonTorch) {
  ASSERT_EQ(run("").exit_code, 0);
  const fs::path exported_file = dir_ / "weights.pt";
  auto e = plugtrain("export " + shell_quote((version(0) / "checkpoints" / "last.ckpt").string()) + " " +
                     shell_quote(exported_file.string()));
  ASSERT_EQ(e.exit_code, 0) << e.out;
  // Python: torch.load with its default (weights_only=True), into the equivalent nn.Module,
  // then save a modified state_dict for plugtrain to start from.
  std::ofstream(dir_ / "roundtrip.py") << R"(
import sys, torch, torch.nn as nn
class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(64, 32)
        self.fc2 = nn.Linear(32, 10)
state = torch.load(sys.argv[1])
model = MLP()
model.load_state_dict(state)           # same key names, same shapes
print("python loaded", sorted(state.keys()))
with torch.no_grad():
    model.fc2.bias.fill_(0.25)
torch.save(model.state_dict(), sys.argv[2])
torch.save({"fc1.weight": torch.zeros(3, 3)}, sys.argv[3])
)";
  auto py = run_process(std::string(PLUGTRAIN_PYTHON) + " " + shell_quote((dir_ / "roundtrip.py").string()) + " " +
                        shell_quote(exported_file.string()) + " " + shell_quote((dir_ / "from_python.pt").string()) +
                        " " + shell_quote((dir_ / "wrong.pt").string()));
  ASSERT_EQ(py.exit_code, 0) << py.out;
  EXPECT_NE(py.out.find("python loaded ['fc1.bias', 'fc1.weight', 'fc2.bias', 'fc2.weight']"), std::string::npos)
      << py.out;

  auto init = run("--set model.init=\"from_python.pt\" --set train.epochs=1");
  ASSERT_EQ(init.exit_code, 0) << init.out;
  EXPECT_NE(init.out.find("model: initialised from from_python.pt"), std::string::npos) << init.out;

  auto wrong = run("--set model.init=\"wrong.pt\"");
  EXPECT_EQ(wrong.exit_code, 1);
  EXPECT_NE(wrong.out.find("wrong.pt: does not match the model: missing fc1.bias; shape of fc1.weight: file [3, 3], "
                           "model [32, 64]; missing fc2.bias; missing fc2.weight"),
            std::string::npos)
      << wrong.out;
}
#endif

TEST(Crc32c, MatchesTheStandardCheckValue) {
  EXPECT_EQ(crc32c("123456789", 9), 0xE3069283u);
  EXPECT_EQ(crc32c("", 0), 0u);
}

#ifdef PLUGTRAIN_PYTHON
// The event files are read with the real TensorBoard reader from PyPI, not with our own.
TEST_F(CheckpointTest, TensorBoardReadsTheScalars) {
  auto r = run("--set train.log_interval=30");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  std::ofstream(dir_ / "read_tb.py") << R"(
import sys, json
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
ea = EventAccumulator(sys.argv[1]); ea.Reload()
tags = ea.Tags()["scalars"]
print("TAGS", " ".join(sorted(tags)))
print("ACC", json.dumps([[s.step, s.value] for s in ea.Scalars("epoch/test_accuracy")]))
print("STEPS", len(ea.Scalars("train/loss_step")))
)";
  auto py = run_process(std::string(PLUGTRAIN_PYTHON) + " " + shell_quote((dir_ / "read_tb.py").string()) + " " +
                            shell_quote((version(0) / "tensorboard").string()) + " 2>/dev/null",
                        false);
  ASSERT_EQ(py.exit_code, 0) << py.out;
  for (const char* t : {"epoch/test_accuracy", "epoch/test_loss", "epoch/train_loss", "epoch/lr", "phase/fwd_share",
                        "epoch/samples_per_second", "epoch/memory_used_bytes", "train/loss_step"})
    EXPECT_NE(py.out.find(t), std::string::npos) << t << "\n" << py.out;
  EXPECT_NE(py.out.find("STEPS 8"), std::string::npos) << py.out;  // 240 steps, every 30
  // The accuracies TensorBoard shows are the ones in summary.json.
  std::ifstream in(version(0) / "summary.json");
  const auto summary = nlohmann::json::parse(in);
  const std::string acc_line = py.out.substr(py.out.find("ACC ") + 4);
  const auto acc = nlohmann::json::parse(acc_line.substr(0, acc_line.find('\n')));
  ASSERT_EQ(acc.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(acc[i][0].get<int>(), int(i) + 1);
    EXPECT_NEAR(acc[i][1].get<double>(), summary["epochs"][i]["test_accuracy"].get<double>(), 1e-6);
  }
}
#endif

TEST_F(CheckpointTest, LionMomentumSurvivesResumeBitwise) {
  expect_resume_is_bitwise("--set optim.name=\"lion\" --set optim.lr=0.0005 --set schedule.name=\"none\" ",
                           "Lion state");
}

TEST_F(CheckpointTest, ResumingAFinishedRunSaysSo) {
  const std::string flat = "--set schedule.name=\"none\" ";
  ASSERT_EQ(run(flat).exit_code, 0);
  auto again = run(flat + "--resume last");
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_NE(again.out.find("already trained all 4 epochs; raise train.epochs"), std::string::npos) << again.out;
  auto more = run(flat + "--set train.epochs=5 --resume last");
  EXPECT_EQ(more.exit_code, 0) << more.out;
  EXPECT_EQ(summary(0)["epochs"].size(), 5u) << more.out;
  EXPECT_EQ(summary(0)["resumed_from"]["epochs_done"], 4) << more.out;
}

TEST_F(CheckpointTest, ResumeRefusesAChangedExperimentButAllowsMoreEpochs) {
  ASSERT_EQ(run("--set train.epochs=2").exit_code, 0);
  auto changed = run("--set data.batch_size=25 --set experiment.seed=9 --resume last");
  EXPECT_EQ(changed.exit_code, 1);
  EXPECT_NE(changed.out.find("this experiment differs from the one that wrote the checkpoint"), std::string::npos)
      << changed.out;
  EXPECT_NE(changed.out.find("data.batch_size 50 -> 25"), std::string::npos) << changed.out;
  EXPECT_NE(changed.out.find("experiment.seed 5 -> 9"), std::string::npos) << changed.out;
  auto longer = run("--set train.epochs=3 --set train.log_interval=7 --resume last");
  EXPECT_EQ(longer.exit_code, 0) << longer.out;
}

TEST_F(CheckpointTest, Fp16LossScaleSurvivesResumeBitwise) {
  expect_resume_is_bitwise("--set train.precision=\"fp16\" --set schedule.name=\"none\" ", "fp16 run");
}

}  // namespace checkpoint_test
}  // namespace plugtrain
