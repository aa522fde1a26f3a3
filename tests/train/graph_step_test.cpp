// Training steps replayed from a recorded device graph (train.graphs), on any machine: a
// recorder that keeps the recorded work and runs it again stands in for CUDA graphs. What is
// checked is the host's side: which batches are recorded, warmed up, replayed or run eagerly,
// that the learning rate and the step counts follow, that a refused recording falls back or
// fails as asked, and that the decision names its reason. On a GPU machine the same paths run
// with real CUDA graphs in cuda_test.cpp.
// ctest-label: unit
// ctest-label GraphRunTest: e2e
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <ATen/ATen.h>
#include <torch/nn/modules/dropout.h>

#include "graph_fit_fixture.h"
#include "optim/fused_optimizers.h"
#include "support/experiment_folder.h"
#include "support/experiment_toml.h"

namespace plugtrain {
namespace graph_step_test {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::run_process;
using testing::shell_quote;

TEST_F(GraphFitTest, ReplayedStepsGiveTheEagerLossCurveAndStepCounts) {
  const TrainSummary eager = fit(false);
  const std::int64_t eager_steps = first_parameter_step();
  const TrainSummary replayed = fit(true);
  expect_same_curves(eager, replayed);
  EXPECT_EQ(eager.steps, 21);
  EXPECT_EQ(replayed.steps, 21);
  // 18 full batches: 3 warm-ups, then the 4th recorded and every full one replayed; the three
  // partial batches ran eagerly.
  EXPECT_EQ(counts_.warm_ups, 3);
  EXPECT_EQ(counts_.captures, 1);
  EXPECT_EQ(counts_.replays, 15);
  EXPECT_EQ(replayed.graph_replays, 15);
  EXPECT_EQ(replayed.graph_fallback, "");
  EXPECT_EQ(first_parameter_step(), eager_steps) << "the host step counts a checkpoint stores";
  EXPECT_EQ(eager_steps, 21);
}

// train.accumulate_steps = 2: each group of two full micro-batches is one recording, replayed
// at its second; the epoch's last group (one batch of 4) runs eagerly. The curve is eager
// accumulation's, and the loss and accuracy of the first micro-batch count as the eager one's.
TEST_F(GraphFitTest, AccumulatedStepsReplayTheirWholeGroupLikeEagerAccumulation) {
  auto accumulate = [](Experiment& e) { e.train.accumulate_steps = 2; };
  const TrainSummary eager = fit(false, accumulate);
  const std::int64_t eager_steps = first_parameter_step();
  const TrainSummary replayed = fit(true, accumulate);
  expect_same_curves(eager, replayed);
  for (std::size_t i = 0; i < eager.epochs.size(); ++i)
    EXPECT_NEAR(*eager.epochs[i].metric("train_accuracy"), *replayed.epochs[i].metric("train_accuracy"), 1e-9)
        << "epoch " << i + 1;
  // 7 batches per epoch: 3 full groups and the group of the last batch, 4 optimizer steps.
  EXPECT_EQ(replayed.steps, 12);
  EXPECT_EQ(eager_steps, 12);
  EXPECT_EQ(first_parameter_step(), eager_steps);
  // 9 full groups: 3 warm-ups, the 4th recorded, it and the 5 after it replayed.
  EXPECT_EQ(counts_.warm_ups, 3);
  EXPECT_EQ(counts_.captures, 1);
  EXPECT_EQ(counts_.replays, 6);
  EXPECT_EQ(replayed.graph_replays, 6);
}

TEST_F(GraphFitTest, SgdWithMomentumAndDropoutFreeModelReplaysLikeEager) {
  auto sgd = [](Experiment& e) {
    e.optim.name = OptimizerName::sgd;
    e.optim.momentum = 0.9;
    e.optim.nesterov = true;
    e.optim.weight_decay = 5e-4;
    e.schedule.name = ScheduleName::step;
    e.schedule.step_size = 1;
    e.schedule.gamma = 0.5;
  };
  const TrainSummary eager = fit(false, sgd);
  const TrainSummary replayed = fit(true, sgd);
  expect_same_curves(eager, replayed);
  EXPECT_EQ(replayed.graph_replays, 15);
}

// fp16: the overflow check, the skip and the loss-scale update are decided on the device once
// steps are recorded (the host never reads them per step); the same steps are skipped, the
// curve is eager's, and the step counts a checkpoint stores leave the skipped steps out.
TEST_F(GraphFitTest, Fp16SkipsOverflowedStepsOnTheDeviceAsEagerSkipsThemOnTheHost) {
  // One huge sample: the step whose batch holds it overflows, in every epoch (after the
  // warm-up steps too, so replayed steps skip on the device).
  alter_data_ = [](data::Dataset& d) { d.images[7].mul_(1e4); };
  for (OptimizerName name : {OptimizerName::adam, OptimizerName::sgd}) {
    SCOPED_TRACE(word_of(name));
    auto fp16 = [&](Experiment& e) {
      e.train.precision = PrecisionMode::fp16;
      e.optim.name = name;
      e.optim.momentum = 0.9;
      e.optim.lr = 0.003;
    };
    const TrainSummary eager = fit(false, fp16);
    const bool adam = name == OptimizerName::adam;
    const std::int64_t eager_steps = adam ? first_parameter_step() : 0;
    const TrainSummary replayed = fit(true, fp16);
    expect_same_curves(eager, replayed);
    EXPECT_GE(eager.skipped_steps, 3) << "one overflowing step per epoch at least";
    EXPECT_EQ(replayed.skipped_steps, eager.skipped_steps);
    EXPECT_GT(replayed.graph_replays, 0);
    if (adam) {
      dynamic_cast<ReplayableOptimizer&>(*optimizer_).sync_host_steps();  // as before a checkpoint
      EXPECT_EQ(first_parameter_step(), eager_steps);
      EXPECT_EQ(eager_steps, 21 - eager.skipped_steps);
    }
  }
}

TEST_F(GraphFitTest, ARefusedRecordingFallsBackToEagerStepsOrFailsAsAsked) {
  const TrainSummary eager = fit(false);
  const TrainSummary fallen_back = fit(
      true, [](Experiment&) {}, /*refuse=*/true);
  expect_same_curves(eager, fallen_back);
  EXPECT_EQ(counts_.captures, 1) << "tried once, then eager for the rest of the run";
  EXPECT_EQ(fallen_back.graph_replays, 0);
  EXPECT_NE(fallen_back.graph_fallback.find("operation not permitted when stream is capturing"), std::string::npos)
      << fallen_back.graph_fallback;
  EXPECT_EQ(first_parameter_step(), 21) << "the refused recording counted no step";
  try {
    fit(
        true, [](Experiment&) {}, /*refuse=*/true, /*fall_back=*/false);
    FAIL() << "train.graphs = true with a refused recording must stop the run";
  } catch (const GraphCaptureError& error) {
    EXPECT_NE(std::string(error.what()).find("train.graphs = true, but the training step cannot be recorded"),
              std::string::npos)
        << error.what();
  }
}

TEST(GraphDecision, AutoUsesGraphsOnlyWhenNothingStandsInTheWay) {
  GraphConditions ok;
  EXPECT_TRUE(decide_graphs(ok).use);
  EXPECT_EQ(decide_graphs(ok).why, "on: every full training step replayed from one recorded device graph");
  GraphConditions off = ok;
  off.setting = false;
  EXPECT_FALSE(decide_graphs(off).use);

  auto reason = [&](const std::function<void(GraphConditions&)>& change) {
    GraphConditions c = ok;
    change(c);
    const GraphDecision d = decide_graphs(c);
    EXPECT_FALSE(d.use);
    c.setting = true;
    try {
      decide_graphs(c);
      ADD_FAILURE() << "true must fail: " << d.why;
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()), "train.graphs = true, but the steps cannot be replayed from a graph: " +
                                           d.why.substr(std::string("off: ").size()));
    }
    return d.why;
  };
  EXPECT_EQ(
      reason([](GraphConditions& c) { c.backend_records = WhyNot{"this backend does not record device graphs"}; }),
      "off: this backend does not record device graphs");
  EXPECT_EQ(reason([](GraphConditions& c) { c.replicas = 2; }), "off: dp runs 2 model replicas from this process");
  GraphConditions ddp = ok;
  ddp.processes = 4;
  EXPECT_TRUE(decide_graphs(ddp).use);
  EXPECT_NE(decide_graphs(ddp).why.find("two recorded device graphs"), std::string::npos);
  EXPECT_NE(reason([](GraphConditions& c) { c.skip_nonfinite = true; }).find("skip_step"), std::string::npos);
  EXPECT_EQ(reason([](GraphConditions& c) { c.optimizer_replayable = WhyNot{"not fused"}; }), "off: not fused");
  EXPECT_EQ(reason([](GraphConditions& c) { c.loss_replayable = WhyNot{"task 'x': reads"}; }), "off: task 'x': reads");
}

// The whole path through a run: a backend plugin that records graphs (tests/test_plugins/
// graph_recorder_backend.cpp), the decision in the log, the replays in summary.json, and a
// resumed run that continues exactly.
class GraphRunTest : public testing::ExperimentFolderTest {
 protected:
  GraphRunTest()
      : ExperimentFolderTest("graph_run", testing::ExperimentToml::synthetic("g")
                                              .set("experiment.seed", 4)
                                              .set("backend.name", "graphrec")
                                              .set("model.dropout", 0.0)
                                              .set("data.synthetic_train_size", 420)
                                              .set("data.synthetic_test_size", 100)
                                              .unset("optim")
                                              .set("optim.name", "adamw")
                                              .set("optim.lr", 0.003)
                                              .set("train.epochs", 2)
                                              .text()) {}
  std::string run_args(const std::string& extra = "") const {
    return "run exp.toml --plugin-path " +
           shell_quote((fs::path(PLUGTRAIN_TEST_PLUGIN_DIR) / "graph_recorder").string()) + " " + extra;
  }
  nlohmann::json summary(const std::string& version) const {
    std::ifstream in(dir_ / "runs" / "g" / version / "summary.json");
    return nlohmann::json::parse(in);
  }
};

TEST_F(GraphRunTest, AutoReplaysOnABackendThatRecordsAndSaysSo) {
  auto r = plugtrain(run_args());
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("device: graphs on: every full training step replayed"), std::string::npos) << r.out;
  const nlohmann::json s = summary("version_0");
  // 420 samples in batches of 50: 8 full and one partial per epoch; 3 warm-ups.
  EXPECT_EQ(s["graph_replays"], 2 * 8 - 3);
  EXPECT_EQ(s["graph_fallback"], "");

  auto eager = plugtrain(run_args("--set train.graphs=false"));
  ASSERT_EQ(eager.exit_code, 0) << eager.out;
  EXPECT_EQ(eager.out.find("device: graphs"), std::string::npos) << eager.out;
  const nlohmann::json e = summary("version_1");
  EXPECT_EQ(e["graph_replays"], 0);
  for (int i = 0; i < 2; ++i)
    EXPECT_NEAR(e["epochs"][i]["train_loss"].get<double>(), s["epochs"][i]["train_loss"].get<double>(), 1e-6);
}

TEST_F(GraphRunTest, AccumulatedStepsAreRecordedWholeAndSaySo) {
  auto r = plugtrain(run_args("--set train.accumulate_steps=2"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("device: graphs on: every full training step (2 micro-batches and the optimizer step) replayed "
                       "from one recorded device graph"),
            std::string::npos)
      << r.out;
  const nlohmann::json s = summary("version_0");
  // 9 batches per epoch: 4 full groups of 2 and the last batch alone; 3 warm-ups.
  EXPECT_EQ(s["graph_replays"], 2 * 4 - 3);
  auto eager = plugtrain(run_args("--set train.accumulate_steps=2 --set train.graphs=false"));
  ASSERT_EQ(eager.exit_code, 0) << eager.out;
  const nlohmann::json e = summary("version_1");
  for (int i = 0; i < 2; ++i)
    EXPECT_NEAR(e["epochs"][i]["train_loss"].get<double>(), s["epochs"][i]["train_loss"].get<double>(), 1e-6);
  EXPECT_NEAR(e["final_test_loss"].get<double>(), s["final_test_loss"].get<double>(), 1e-6);
  // Under ddp the step runs eagerly, and the log says why.
  auto ddp =
      plugtrain(run_args("--set train.accumulate_steps=2 --set backend.devices=2 --set backend.strategy='\"ddp\"'"));
  ASSERT_EQ(ddp.exit_code, 0) << ddp.out;
  EXPECT_NE(ddp.out.find("graphs off: train.accumulate_steps = 2 with 2 processes steps eagerly"), std::string::npos)
      << ddp.out;
}

TEST_F(GraphRunTest, AResumedRunWithGraphsContinuesExactly) {
  ASSERT_EQ(plugtrain(run_args()).exit_code, 0);
  auto first = plugtrain(run_args("--set train.epochs=1"));
  ASSERT_EQ(first.exit_code, 0) << first.out;
  auto resumed = plugtrain(run_args("--resume last --set train.epochs=2"));
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out;
  const nlohmann::json whole = summary("version_0"), split = summary("version_1");
  ASSERT_EQ(split["epochs"].size(), 2u) << split.dump();
  EXPECT_NEAR(split["epochs"][1]["train_loss"].get<double>(), whole["epochs"][1]["train_loss"].get<double>(), 1e-9);
  EXPECT_NEAR(split["final_test_loss"].get<double>(), whole["final_test_loss"].get<double>(), 1e-9);
}

// ddp: each rank replays forward and backward, all-reduces the gradients eagerly (one Gloo
// call), and replays the optimizer step; the curve is eager ddp's.
TEST_F(GraphRunTest, DdpReplaysTwoRecordingsAroundTheAllReduceLikeEagerDdp) {
  const std::string ddp = "--set backend.devices=2 --set backend.strategy='\"ddp\"' ";
  auto r = plugtrain(run_args(ddp));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(summary("version_0")["strategy"], "ddp");
  EXPECT_EQ(summary("version_0")["world_size"], 2);
  EXPECT_THAT(r.out, HasSubstr("device: graphs on: every full training step replayed from two recorded device graphs"));
  auto eager = plugtrain(run_args(ddp + "--set train.graphs=false"));
  ASSERT_EQ(eager.exit_code, 0) << eager.out;
  const nlohmann::json g = summary("version_0"), e = summary("version_1");
  // 420 samples over 2 ranks in batches of 50: 4 full and one partial batch per rank and epoch.
  EXPECT_EQ(g["graph_replays"], 2 * 4 - 3);
  ASSERT_EQ(g["epochs"].size(), 2u);
  for (int i = 0; i < 2; ++i)
    EXPECT_NEAR(g["epochs"][i]["train_loss"].get<double>(), e["epochs"][i]["train_loss"].get<double>(), 1e-6);
  EXPECT_NEAR(g["final_test_loss"].get<double>(), e["final_test_loss"].get<double>(), 1e-6);
}

TEST_F(GraphRunTest, TrueFailsWithTheReasonWhenTheRunCannotReplay) {
  auto r = plugtrain(run_args("--set optim.name=rmsprop --set train.graphs=true"));
  EXPECT_NE(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("train.graphs = true, but the steps cannot be replayed from a graph: the optimizer is not in "
                       "its fused form"),
            std::string::npos)
      << r.out;
  auto cpu = plugtrain(run_args("--set backend.name=cpu --set train.graphs=true"));
  EXPECT_NE(cpu.exit_code, 0) << cpu.out;
  EXPECT_NE(cpu.out.find("this backend does not record device graphs"), std::string::npos) << cpu.out;
  auto refused = run_process("export PLUGTRAIN_TEST_GRAPH_REFUSE=1; " + command(run_args()));
  ASSERT_EQ(refused.exit_code, 0) << refused.out;
  EXPECT_NE(refused.out.find("graphs: the step could not be recorded (operation not permitted"), std::string::npos)
      << refused.out;
  // CTC's loss reads the lengths on the host: a sequence task's step cannot be recorded.
  fs::remove_all(dir_ / "runs");
  write_experiment(testing::ExperimentToml("g")
                       .set("backend.name", "graphrec")
                       .set("model.name", "crnn")
                       .set("model.channels", {8})
                       .set("model.hidden", 8)
                       .set("task.name", "sequence")
                       .set("data.dataset", "synthetic")
                       .set("data.synthetic_shape", {1, 8, 16})
                       .set("data.synthetic_train_size", 100)
                       .set("data.synthetic_test_size", 20)
                       .set("optim.name", "adamw")
                       .text());
  auto ctc = plugtrain(run_args("--set train.graphs=true"));
  EXPECT_EQ(ctc.exit_code, 2) << ctc.out;
  EXPECT_NE(ctc.out.find("cannot be replayed from a graph: task 'sequence': CTC's loss reads the sequence lengths on "
                         "the host"),
            std::string::npos)
      << ctc.out;
  EXPECT_FALSE(fs::exists(dir_ / "runs")) << "refused before a run folder is made";
}

}  // namespace graph_step_test
}  // namespace plugtrain
