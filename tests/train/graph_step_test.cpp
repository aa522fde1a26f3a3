// Training steps replayed from a recorded device graph (train.graphs), on any machine: a
// recorder that keeps the recorded work and runs it again stands in for CUDA graphs. What is
// checked is the host's side: which batches are recorded, warmed up, replayed or run eagerly,
// that the learning rate and the step counts follow, that a refused recording falls back or
// fails as asked, and that the decision names its reason. On a GPU machine the same paths run
// with real CUDA graphs in cuda_test.cpp.
// ctest-label: unit
// ctest-label GraphRunTest: e2e
#include <atomic>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <ATen/ATen.h>
#include <ATen/record_function.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/linear.h>
#include <torch/optim/adam.h>

#include "data/dataset.h"
#include "data/device_resident.h"
#include "data/from_experiment.h"
#include "optim/fused_optimizers.h"
#include "readers/synthetic.h"
#include "support/experiment_folder.h"
#include "support/experiment_toml.h"
#include "train/graph_step.h"
#include "train/trainer.h"

namespace plugtrain {
namespace graph_step_test {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::run_process;
using testing::shell_quote;

// True while the step's recorded work (or a warm-up of it) runs.
std::atomic<bool> g_in_recorded_work{false};
struct InRecordedWork {
  InRecordedWork() { g_in_recorded_work = true; }
  ~InRecordedWork() { g_in_recorded_work = false; }
};

// Keeps the recorded work and reruns it on replay; counts what it was asked to do.
struct Recorder : GraphCapture {
  struct Counts {
    int warm_ups = 0, captures = 0, replays = 0;
  };
  Recorder(Counts& counts, bool refuse) : counts_(counts), refuse_(refuse) {}
  void warm_up(const std::function<void()>& work) override {
    ++counts_.warm_ups;
    InRecordedWork inside;
    work();
  }
  void capture(const std::function<void()>& work) override {
    ++counts_.captures;
    if (refuse_) throw std::runtime_error("operation not permitted when stream is capturing");
    recorded_ = work;
  }
  void replay() override {
    ++counts_.replays;
    InRecordedWork inside;
    recorded_();
  }
  Counts& counts_;
  bool refuse_;
  std::function<void()> recorded_;
};

class Net : public TensorModel {
 public:
  Net()
      : fc1(register_module("fc1", torch::nn::Linear(16, 24))), fc2(register_module("fc2", torch::nn::Linear(24, 3))) {}
  torch::Tensor forward(torch::Tensor x) override { return fc2(at::relu(fc1(x.flatten(1)))); }
  torch::nn::Linear fc1, fc2;
};

class GraphFitTest : public ::testing::Test {
 protected:
  // 100 samples in batches of 16: six full batches and one of 4 per epoch.
  TrainSummary fit(
      bool graphs, const std::function<void(Experiment&)>& configure = [](Experiment&) {}, bool refuse = false,
      bool fall_back = true) {
    e_ = Experiment{};
    e_.train.epochs = 3;
    e_.data.batch_size = 16;
    e_.train.log_interval = 0;
    e_.experiment.seed = 5;
    e_.optim.name = OptimizerName::adam;
    e_.optim.impl = OptimizerImpl::fused;
    e_.optim.lr = 0.01;
    e_.schedule.name = ScheduleName::cosine;
    e_.train.grad_clip = 0.5;
    configure(e_);
    data_ = data::make_synthetic({1, 4, 4}, 3, 100, 40, 5);
    if (alter_data_) alter_data_(data_.train);
    at::manual_seed(5);
    TrainerParts parts = single_device_parts(e_, std::make_shared<Net>(), data_, {});
    if (on_device_)  // data.on_device, with the CPU standing in for the device
      parts.device.train_on_device = std::make_shared<data::DeviceResident>(
          data_.train, data::augment_options(parts.loop.augment), c10::Device(c10::kCPU));
    optimizer_ = parts.optimizer.get();
    counts_ = {};
    if (graphs) {
      parts.make_graph_capture = [this, refuse] { return std::make_unique<Recorder>(counts_, refuse); };
      parts.graph_fallback = fall_back;
    }
    trainer_ = std::make_unique<Trainer>(std::move(parts));
    return trainer_->fit();
  }
  std::int64_t first_parameter_step() const {
    const auto& state = optimizer_->state();
    return static_cast<const torch::optim::AdamParamState&>(*state.begin()->second).step();
  }
  static void expect_same_curves(const TrainSummary& a, const TrainSummary& b) {
    ASSERT_EQ(a.epochs.size(), b.epochs.size());
    for (std::size_t i = 0; i < a.epochs.size(); ++i) {
      EXPECT_NEAR(a.epochs[i].train_loss, b.epochs[i].train_loss, 1e-6) << "epoch " << i + 1;
      EXPECT_NEAR(*a.epochs[i].test_loss, *b.epochs[i].test_loss, 1e-6) << "epoch " << i + 1;
    }
  }

  Experiment e_;
  bool on_device_ = false;
  std::function<void(data::Dataset&)> alter_data_;
  data::DatasetPair data_;
  torch::optim::Optimizer* optimizer_ = nullptr;
  Recorder::Counts counts_;
  std::unique_ptr<Trainer> trainer_;
};

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

// Counts one operator's calls outside the step's recorded work (LibTorch's RecordFunction).
class CallsOutsideTheRecording {
 public:
  explicit CallsOutsideTheRecording(std::string op) : op_(std::move(op)) {
    watched_ = op_;
    calls_ = 0;
    handle_ = at::addGlobalCallback(
        at::RecordFunctionCallback([](const at::RecordFunction& fn) -> std::unique_ptr<at::ObserverContext> {
          // The training thread's ops only: the loader's threads never compute the statistics.
          if (std::this_thread::get_id() == trainer_thread_ && !g_in_recorded_work && fn.name() == watched_) ++calls_;
          return nullptr;
        }));
  }
  ~CallsOutsideTheRecording() { at::removeCallback(handle_); }
  int calls() const { return calls_; }

 private:
  std::string op_;
  at::CallbackHandle handle_;
  static inline std::string watched_;
  static inline std::atomic<int> calls_{0};
  static inline const std::thread::id trainer_thread_ = std::this_thread::get_id();  // fit() runs on the test's thread
};

// A replayed step adds its loss and accuracy to the epoch's running sums inside its recording:
// on a GPU those adds and the task's statistics are no launches of their own beside the graph's.
// Outside the recorded work only the eager steps (the 3 partial batches) and the evaluations
// compute the training accuracy's argmax, and the epoch figures stay the eager run's.
TEST_F(GraphFitTest, ReplayedStepsCountTheirFiguresInsideTheRecording) {
  int eager_outside = 0, replayed_outside = 0;
  TrainSummary eager, replayed;
  {
    CallsOutsideTheRecording argmax("aten::argmax");
    eager = fit(false);
    eager_outside = argmax.calls();
  }
  {
    CallsOutsideTheRecording argmax("aten::argmax");
    replayed = fit(true);
    replayed_outside = argmax.calls();
  }
  ASSERT_EQ(counts_.warm_ups + counts_.replays, 18) << "every full batch ran as recorded work";
  EXPECT_GT(eager_outside, 21) << "21 training steps and the evaluations";
  EXPECT_EQ(replayed_outside, eager_outside - 18) << "the 18 full steps counted inside the recorded work";
  expect_same_curves(eager, replayed);
  for (std::size_t i = 0; i < eager.epochs.size(); ++i)
    EXPECT_NEAR(*eager.epochs[i].metric("train_accuracy"), *replayed.epochs[i].metric("train_accuracy"), 1e-9) << i;
}

// data.on_device: a replayed step gathers its batch inside the recording (only the samples'
// places, and with crops or flips their row and column maps, are copied in before it), so on a
// GPU the gather, the byte-to-float conversion and the normalisation are no launches of their
// own. Outside the recorded work only the eager steps (the 3 partial batches) gather, and the
// curves and accuracies are eager's, with the same byte images, crops and flips.
TEST_F(GraphFitTest, ReplayedStepsGatherTheirBatchesInsideTheRecording) {
  on_device_ = true;
  alter_data_ = [](data::Dataset& d) {  // byte images, normalised by the loader as real ones are
    d.images = d.images.mul(40).add(128).clamp(0, 255).to(at::kByte);
    d.normalization = {{0.5}, {0.25}};
  };
  for (const bool moves : {false, true}) {
    SCOPED_TRACE(moves ? "random_crop and horizontal_flip" : "no augmentation");
    auto augment = [&](Experiment& e) {
      if (moves) e.data.augment.order = {Augmentation::random_crop, Augmentation::horizontal_flip};
      e.data.augment.crop_padding = 1;
    };
    // The images' gather: index_select without crops or flips, one advanced index with them.
    const char* gather = moves ? "aten::index" : "aten::index_select";
    int eager_outside = 0, replayed_outside = 0;
    TrainSummary eager, replayed;
    {
      CallsOutsideTheRecording calls(gather);
      eager = fit(false, augment);
      eager_outside = calls.calls();
    }
    {
      CallsOutsideTheRecording calls(gather);
      replayed = fit(true, augment);
      replayed_outside = calls.calls();
    }
    ASSERT_EQ(counts_.warm_ups + counts_.replays, 18) << "every full batch ran as recorded work";
    EXPECT_GE(eager_outside, 21) << "21 training batches gathered";
    EXPECT_EQ(replayed_outside, eager_outside - 18 * (moves ? 1 : 2))
        << "the 18 full batches gathered inside the recorded work (without crops: images and labels)";
    expect_same_curves(eager, replayed);
    for (std::size_t i = 0; i < eager.epochs.size(); ++i)
      EXPECT_NEAR(*eager.epochs[i].metric("train_accuracy"), *replayed.epochs[i].metric("train_accuracy"), 1e-9) << i;
  }
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
