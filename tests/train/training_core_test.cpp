// The parts of the training core on their own, without the executable: the best-so-far
// tracker, early stopping, checkpoint retention, each callback's checkpoint state, the
// strategy of one, and the fit loop's reasons to stop.
// ctest-label: unit
#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <torch/nn/modules/linear.h>
#include <torch/optim/sgd.h>

#include "data/dataset.h"
#include "process/interrupt.h"
#include "readers/synthetic.h"
#include "strategy/single_device.h"
#include "support/run_process.h"
#include "task/task_registry.h"
#include "train/best_so_far.h"
#include "train/callbacks/checkpoint_saver.h"
#include "train/callbacks/early_stopping.h"
#include "train/precision.h"
#include "train/trainer.h"

namespace plugtrain {
namespace training_core_test {

namespace fs = std::filesystem;

EpochMetrics epoch_with(std::int64_t epoch, std::optional<double> test_accuracy, double train_loss = 1.0) {
  EpochMetrics m;
  m.epoch = epoch;
  if (test_accuracy) m.test = {{"accuracy", *test_accuracy}};
  m.test_loss = test_accuracy ? std::optional<double>(1 - *test_accuracy) : std::nullopt;
  m.train_loss = train_loss;
  return m;
}

TEST(BestSoFar, MaximisesOrMinimisesWithMinDelta) {
  BestSoFar acc(/*maximise=*/true, 0.01);
  EXPECT_TRUE(acc.offer(0.50, 1));
  EXPECT_FALSE(acc.offer(0.505, 2)) << "within min_delta";
  EXPECT_TRUE(acc.offer(0.52, 3));
  EXPECT_EQ(acc.epoch(), 3);
  EXPECT_DOUBLE_EQ(acc.value(), 0.52);
  BestSoFar loss(/*maximise=*/false);
  EXPECT_TRUE(loss.offer(2.0, 1));
  EXPECT_FALSE(loss.offer(2.5, 2));
  EXPECT_TRUE(loss.offer(1.5, 3));
}

TEST(Monitor, AutoIsTheTasksHeadlineInItsOwnDirectionAndAModeOverridesIt) {
  const TaskDefinition& classification = *find_task("classification");
  const auto& training = classification.training_metrics;
  const auto& evaluation = classification.evaluation_metrics;
  const std::optional<Monitor> automatic = find_monitor(training, evaluation, std::nullopt, std::nullopt);
  ASSERT_TRUE(automatic);
  EXPECT_EQ(automatic->name, "test_accuracy");
  EXPECT_EQ(automatic->direction, Direction::max);
  EXPECT_EQ(find_monitor(training, evaluation, "train_loss", std::nullopt)->direction, Direction::min);
  EXPECT_EQ(find_monitor(training, evaluation, "test_top5_accuracy", std::nullopt)->direction, Direction::max);
  EXPECT_EQ(find_monitor(training, evaluation, "test_accuracy", Direction::min)->direction, Direction::min);
  EXPECT_EQ(find_monitor(training, evaluation, "train_loss", Direction::max)->direction, Direction::max);
  EXPECT_FALSE(find_monitor(training, evaluation, "test_miou", std::nullopt)) << "not classification's";
  EXPECT_FALSE(find_monitor(training, evaluation, "train_top5_accuracy", std::nullopt))
      << "measured on the test set only";
  const TaskDefinition& regression = *find_task("regression");
  EXPECT_EQ(find_monitor(regression.training_metrics, regression.evaluation_metrics, std::nullopt, std::nullopt)->name,
            "test_mae");
  EXPECT_EQ(
      find_monitor(regression.training_metrics, regression.evaluation_metrics, std::nullopt, std::nullopt)->direction,
      Direction::min)
      << "an error is minimised";
}

TEST(EarlyStopping, StopsAfterPatienceEvaluatedEpochsWithoutImprovement) {
  EarlyStopping stopping(Monitor{"test_accuracy", Direction::max}, 2, 0.0);
  LoopState state;
  stopping.on_epoch_end(state, epoch_with(1, 0.6));
  stopping.on_epoch_end(state, epoch_with(2, 0.5));
  stopping.on_epoch_end(state, epoch_with(3, std::nullopt));  // no evaluation: does not count
  EXPECT_FALSE(state.stopping());
  stopping.on_epoch_end(state, epoch_with(4, 0.55));
  EXPECT_EQ(state.stop, StopReason::early_stopping);
  EXPECT_EQ(state.stop_message, "early stopping: test_accuracy did not improve for 2 evaluated epochs");
}

TEST(EarlyStopping, ItsStateSurvivesACheckpoint) {
  EarlyStopping before(Monitor{"test_accuracy", Direction::max}, 3, 0.0);
  LoopState state;
  before.on_epoch_end(state, epoch_with(1, 0.7));
  before.on_epoch_end(state, epoch_with(2, 0.6));
  StateSection record;
  before.save_state(record);
  EarlyStopping after(Monitor{"test_accuracy", Direction::max}, 3, 0.0);
  after.load_state(record);
  EXPECT_EQ(after.epochs_without_improvement(), 1);
  after.on_epoch_end(state, epoch_with(3, 0.65));  // still below 0.7: the restored best counts
  EXPECT_EQ(after.epochs_without_improvement(), 2);
  after.on_epoch_end(state, epoch_with(4, 0.69));
  EXPECT_EQ(state.stop, StopReason::early_stopping);
}

class CheckpointSaverTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::scratch_dir("saver"); }
  void TearDown() override { fs::remove_all(dir_); }
  // A LoopState whose "checkpoints" are empty files, so the saver's choices can be seen.
  LoopState state_writing_files(std::int64_t epochs) {
    LoopState s;
    s.epochs = epochs;
    s.save_checkpoint = [this](const fs::path& p) {
      std::ofstream(p) << "x";
      saved_.push_back(p.filename().string());
    };
    return s;
  }
  fs::path dir_;
  std::vector<std::string> saved_;
};

TEST_F(CheckpointSaverTest, EveryNEpochsKeepsTheNewestK) {
  Experiment e;
  e.checkpoint.save = CheckpointSave::every;
  e.checkpoint.every_n_epochs = 2;
  e.checkpoint.keep_last = 2;
  CheckpointSaver saver(dir_, e, Monitor{"test_accuracy", Direction::max});
  LoopState state = state_writing_files(7);
  for (int epoch = 1; epoch <= 7; ++epoch) saver.on_epoch_end(state, epoch_with(epoch, 0.5));
  std::vector<std::string> files;
  for (const auto& f : fs::directory_iterator(dir_)) files.push_back(f.path().filename().string());
  std::sort(files.begin(), files.end());
  EXPECT_EQ(files, (std::vector<std::string>{"epoch-0006.ckpt", "epoch-0007.ckpt", "last.ckpt"}))
      << "every 2nd epoch, the last epoch too, the newest 2 kept";
}

TEST_F(CheckpointSaverTest, BestFollowsTheMonitorAndItsStateSurvivesACheckpoint) {
  Experiment e;
  e.checkpoint.save = CheckpointSave::best;
  CheckpointSaver saver(dir_, e, Monitor{"test_loss", Direction::min});
  LoopState state = state_writing_files(5);
  saver.on_epoch_end(state, epoch_with(1, 0.5));  // loss 0.5: best
  saver.on_epoch_end(state, epoch_with(2, 0.4));  // loss 0.6: not
  EXPECT_EQ(std::count(saved_.begin(), saved_.end(), "best.ckpt"), 1);
  StateSection record;
  saver.save_state(record);
  EXPECT_EQ(record.int_at("best_epoch"), 1);
  CheckpointSaver resumed(dir_, e, Monitor{"test_loss", Direction::min});
  resumed.load_state(record);
  resumed.on_epoch_end(state, epoch_with(3, 0.45));  // loss 0.55: worse than the restored 0.5
  EXPECT_EQ(std::count(saved_.begin(), saved_.end(), "best.ckpt"), 1);
  resumed.on_epoch_end(state, epoch_with(4, 0.8));
  EXPECT_EQ(std::count(saved_.begin(), saved_.end(), "best.ckpt"), 2);
}

TEST(Precision, LossScaleStateSurvivesACheckpoint) {
  Precision fp16(PrecisionMode::fp16, c10::Device(c10::kCPU));
  at::Tensor p = at::ones({2}).requires_grad_();
  fp16.backward(p.sum() * std::numeric_limits<float>::infinity());
  torch::optim::SGD sgd({p}, torch::optim::SGDOptions(0.1));
  EXPECT_FALSE(fp16.step(sgd, {p}, 0.0)) << "an overflowing fp16 step is skipped";
  StateSection record;
  fp16.save_state(record);
  EXPECT_DOUBLE_EQ(record.real_at("loss_scale"), 32768.0);
  EXPECT_EQ(record.int_at("skipped_steps"), 1);
  Precision resumed(PrecisionMode::fp16, c10::Device(c10::kCPU));
  resumed.load_state(record);
  StateSection again;
  resumed.save_state(again);
  EXPECT_DOUBLE_EQ(again.real_at("loss_scale"), 32768.0);
  EXPECT_EQ(resumed.skipped_steps(), 1);
}

class Tiny : public TensorModel {
 public:
  Tiny() : fc(register_module("fc", torch::nn::Linear(16, 3))) {}
  torch::Tensor forward(torch::Tensor x) override { return fc(x.flatten(1)); }
  torch::nn::Linear fc;
};

TEST(SingleDevice, IsAWorldOfOneWhoseOperationsDoNothing) {
  Tiny model;
  SingleDevice one(model);
  EXPECT_EQ(one.processes(), 1);
  EXPECT_TRUE(one.is_rank_zero());
  EXPECT_EQ(one.sum({1.5, 2.0}), (std::vector<double>{1.5, 2.0}));
  EXPECT_TRUE(one.stop_question_due(3));
  EXPECT_TRUE(one.agree_to_stop(true));
  EXPECT_FALSE(one.agree_to_stop(false));
  EXPECT_EQ(one.shard(true).count, 1);
  bool ran = false;
  one.backward([&] { ran = true; });
  EXPECT_TRUE(ran);
  const at::Tensor x = at::randn({4, 1, 4, 4});
  EXPECT_TRUE(at::equal(one.forward(x), model.forward(x)));
}

// A fit of the Tiny model on synthetic data, with `configure` applied to the experiment.
class FitLoopTest : public ::testing::Test {
 protected:
  TrainSummary fit(const std::function<void(Experiment&)>& configure,
                   std::vector<std::unique_ptr<Callback>> callbacks = {}) {
    e_.train.epochs = 4;
    e_.data.batch_size = 20;
    e_.train.log_interval = 0;
    e_.experiment.seed = 3;
    configure(e_);
    data_ = data::make_synthetic({1, 4, 4}, 3, 100, 40, 3);
    at::manual_seed(3);
    TrainerParts parts = single_device_parts(e_, std::make_shared<Tiny>(), data_, {});
    parts.callbacks = std::move(callbacks);
    trainer_ = std::make_unique<Trainer>(std::move(parts));
    return trainer_->fit();
  }
  Experiment e_;
  data::DatasetPair data_;
  std::unique_ptr<Trainer> trainer_;
};

TEST_F(FitLoopTest, StopsWhenTheEpochsAreDone) {
  const TrainSummary s = fit([](Experiment&) {});
  EXPECT_EQ(trainer_->state().stop, StopReason::epochs_done);
  EXPECT_EQ(s.epochs.size(), 4u);
  EXPECT_EQ(s.steps, 20);
  EXPECT_FALSE(s.interrupted || s.stopped_early);
  EXPECT_GT(s.final_headline(), 0.0);
  EXPECT_EQ(s.headline.name, "accuracy");
}

TEST_F(FitLoopTest, EveryStepOnTheCpuIsSplitIntoPhasesWhoseSharesAddUp) {
  const TrainSummary s = fit([](Experiment&) {});
  const PhaseTimes& p = s.epochs.front().phases;
  EXPECT_EQ(p.timed_steps, 5) << "100 samples in batches of 20";
  double shares = 0;
  for (int i = 0; i < kPhases; ++i) shares += p.share(Phase(i));
  EXPECT_NEAR(shares, 1.0, 1e-9);
  EXPECT_GT(p.share(Phase::forward) + p.share(Phase::backward), 0.0);
  EXPECT_EQ(p.text().rfind("data ", 0), 0u) << p.text();
  EXPECT_NE(p.text().find(" fwd "), std::string::npos) << p.text();
  const TrainSummary off = fit([](Experiment& e) { e.train.phase_timing = false; });
  EXPECT_EQ(off.epochs.front().phases.timed_steps, 0);
  EXPECT_EQ(off.epochs.front().phases.text(), "");
}

TEST_F(FitLoopTest, StopsMidEpochAtMaxStepsAndStillEvaluates) {
  const TrainSummary s = fit([](Experiment& e) { e.train.max_steps = 7; });
  EXPECT_EQ(trainer_->state().stop, StopReason::max_steps);
  EXPECT_EQ(s.steps, 7);
  ASSERT_EQ(s.epochs.size(), 2u);
  EXPECT_TRUE(s.epochs.back().metric("test_accuracy").has_value()) << "the last epoch is evaluated";
  EXPECT_TRUE(trainer_->state().finished) << "a run ended by max_steps is not resumed";
}

TEST_F(FitLoopTest, StopsEarlyWhenACallbackAsks) {
  std::vector<std::unique_ptr<Callback>> callbacks;
  // A metric that never improves after the first epoch: min_delta 1 on an accuracy.
  callbacks.push_back(std::make_unique<EarlyStopping>(Monitor{"test_accuracy", Direction::max}, 1, 1.0));
  const TrainSummary s = fit([](Experiment&) {}, std::move(callbacks));
  EXPECT_EQ(trainer_->state().stop, StopReason::early_stopping);
  EXPECT_TRUE(s.stopped_early);
  EXPECT_EQ(s.epochs.size(), 2u);
  EXPECT_NE(s.stop_reason.find("early stopping: test_accuracy"), std::string::npos) << s.stop_reason;
}

// Raises SIGINT after the given step, as a user's Ctrl-C would.
class InterruptAt : public Callback {
 public:
  explicit InterruptAt(std::int64_t step) : step_(step) {}
  void on_step_end(const LoopState& state, const at::Tensor&) override {
    if (state.step == step_) std::raise(SIGINT);
  }

 private:
  std::int64_t step_;
};

TEST_F(FitLoopTest, StopsAfterTheStepInWhichAnInterruptCame) {
  InterruptScope interrupts;
  std::vector<std::unique_ptr<Callback>> callbacks;
  callbacks.push_back(std::make_unique<InterruptAt>(7));
  const TrainSummary s = fit([](Experiment&) {}, std::move(callbacks));
  EXPECT_EQ(trainer_->state().stop, StopReason::interrupted);
  EXPECT_TRUE(s.interrupted);
  EXPECT_EQ(s.steps, 7);
  EXPECT_EQ(s.epochs.size(), 1u) << "the interrupted epoch has no figures";
  EXPECT_EQ(trainer_->state().sampler.batches_done, 2) << "where a resume continues inside epoch 2";
  EXPECT_EQ(s.stop_reason, "SIGINT received");
}

}  // namespace training_core_test
}  // namespace plugtrain
