// The epoch loop's parts on their own (train/epoch_loop.cpp puts them in order): accumulation's
// step groups, the running sums kept on the device, and the out-of-memory halving policy. The
// loop's behaviour as a whole is tested end to end (recipe_runs_test, task_strategies_test,
// host_syncs_test, checkpoint_test).
// ctest-label: unit
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "strategy/training_strategy.h"
#include "task/task_registry.h"
#include "train/batch_halving.h"
#include "train/running_sums.h"
#include "train/step_groups.h"
#include "train/train_step.h"
#include "util/error.h"

namespace plugtrain {
namespace epoch_loop_parts_test {

TEST(StepGroups, GroupTheEpochsBatchesAndCountTheShortLastBatch) {
  // 10 batches of 4 samples, the last holding 2 (38 samples), in groups of 3: 0-2, 3-5, 6-8, 9.
  const StepGroups groups(10, 3, 4, 38);
  EXPECT_EQ(groups.accumulate(), 3);
  EXPECT_EQ(groups.optimizer_steps_per_epoch(), 4);
  const StepGroup first = groups.of(0), middle = groups.of(4), last = groups.of(9);
  EXPECT_TRUE(first.first());
  EXPECT_FALSE(first.last());
  EXPECT_EQ(middle.micro, 1);
  EXPECT_EQ(middle.size, 3);
  EXPECT_EQ(middle.samples, 12);
  EXPECT_TRUE(middle.full);
  EXPECT_TRUE(groups.of(5).last());
  EXPECT_EQ(last.size, 1) << "the last group is what is left";
  EXPECT_TRUE(last.first() && last.last());
  EXPECT_EQ(last.samples, 2);
  EXPECT_FALSE(last.full);

  // 9 batches: the last group (6-8) holds the short batch.
  const StepGroup short_group = StepGroups(9, 3, 4, 34).of(7);
  EXPECT_EQ(short_group.samples, 4 + 4 + 2);
  EXPECT_FALSE(short_group.full) << "a recorded group replays full groups only";
}

TEST(StepGroups, WithoutAccumulationEveryBatchIsItsOwnStep) {
  const StepGroups groups(5, 1, 8, 40);
  EXPECT_EQ(groups.optimizer_steps_per_epoch(), 5);
  for (std::int64_t i = 0; i < 5; ++i) {
    EXPECT_TRUE(groups.of(i).first() && groups.of(i).last()) << i;
    EXPECT_EQ(groups.of(i).samples, 8);
  }
  EXPECT_EQ(StepGroups(5, 0, 8, 40).accumulate(), 1) << "0 means no accumulation";
}

// A world of one process whose sum is the identity, as SingleDevice's is.
class OneProcess : public TrainingStrategy {
 public:
  const char* name() const override { return "one"; }
  at::Tensor forward(const at::Tensor& x) override { return x; }
  at::Tensor evaluate(const at::Tensor& x) override { return x; }
  TensorMap forward_fields(const TensorMap& b) override { return b; }
  TensorMap evaluate_fields(const TensorMap& b) override { return b; }
  void backward(const std::function<void()>& f) override { f(); }
  std::vector<double> sum(std::vector<double> values) override { return values; }
  bool stop_question_due(std::int64_t) const override { return true; }
  bool agree_to_stop(bool wants) override { return wants; }
  data::Shard shard(bool) const override { return {}; }
  bool is_rank_zero() const override { return true; }
  int processes() const override { return 1; }
};

class RunningSumsTest : public ::testing::Test {
 protected:
  RunningSumsTest()
      : task_(make_task(*find_task("classification"), default_options(*find_task("classification")), {3, {}, {}},
                        DatasetTargets::class_index, "test")) {}
  // A step's output of `n` samples whose loss is `loss` and whose logits pick class 0.
  static StepOutput output(double loss, std::int64_t n) {
    StepOutput out;
    out.loss = at::full({}, loss);
    out.logits = at::zeros({n, 3});
    out.logits.select(1, 0).fill_(1.0);
    return out;
  }
  std::unique_ptr<Task> task_;
  DeviceContext device_;
  OneProcess strategy_;
  SumTensors tensors_, other_tensors_;
};

TEST_F(RunningSumsTest, SumTheLossBySamplesAndTheTasksStatistics) {
  RunningSums sums(*task_, device_, EpochSums{}, true, false, tensors_);
  sums.count(output(2.0, 4), at::zeros({4}, at::kLong), 4, /*pending=*/false);
  sums.count(output(1.0, 2), at::ones({2}, at::kLong), 2, /*pending=*/false);
  EXPECT_EQ(sums.seen_here(), 6);
  const SummedFigures t = sums.totals(strategy_);
  EXPECT_DOUBLE_EQ(t.loss_sum, 2.0 * 4 + 1.0 * 2) << "each mean loss weighs its samples";
  EXPECT_DOUBLE_EQ(t.seen, 6);
  ASSERT_FALSE(t.statistics.empty());
  EXPECT_DOUBLE_EQ(t.statistics[0], 4) << "the 4 samples of class 0 were predicted right";
}

TEST_F(RunningSumsTest, APendingGroupCountsOnlyOnceItsStepIsTaken) {
  RunningSums sums(*task_, device_, EpochSums{}, true, /*accumulates=*/true, tensors_);
  sums.count(output(5.0, 4), at::zeros({4}, at::kLong), 4, /*pending=*/true);
  EXPECT_EQ(sums.seen_here(), 0) << "pending until the group's step";
  sums.drop_pending();  // a skipped step
  sums.count(output(1.0, 4), at::zeros({4}, at::kLong), 4, /*pending=*/true);
  sums.commit_pending();
  const SummedFigures t = sums.totals(strategy_);
  EXPECT_DOUBLE_EQ(t.loss_sum, 4.0) << "the skipped group counts nothing";
  EXPECT_DOUBLE_EQ(t.seen, 4);
}

TEST_F(RunningSumsTest, AResumedEpochStartsFromItsCarriedSumsOnOneProcessOnly) {
  EpochSums carried;
  carried.loss_sum = 10;
  carried.seen = 5;
  carried.statistics = std::vector<double>(task_->statistics_size(TaskPass::training), 1.0);
  RunningSums carrier(*task_, device_, carried, /*carries_them=*/true, false, tensors_);
  carrier.count(output(1.0, 3), at::zeros({3}, at::kLong), 3, false);
  EXPECT_EQ(carrier.seen_here(), 3) << "the carried samples are not this pass's";
  EXPECT_DOUBLE_EQ(carrier.totals(strategy_).loss_sum, 13);
  EXPECT_DOUBLE_EQ(carrier.totals(strategy_).seen, 8);
  RunningSums other(*task_, device_, carried, /*carries_them=*/false, false, other_tensors_);
  EXPECT_DOUBLE_EQ(other.totals(strategy_).loss_sum, 0) << "another process's sums start at zero";
}

// A recorded step adds into the sums' tensors inside its recording (graph_step.h), so every
// epoch must sum in the same memory, starting again from zero; its device and host parts
// together are one count().
TEST_F(RunningSumsTest, EveryEpochSumsInTheSameTensorsFromZeroAndTheTwoPartsMakeOneCount) {
  const void* loss_memory = nullptr;
  {
    RunningSums first(*task_, device_, EpochSums{}, true, false, tensors_);
    first.count(output(3.0, 4), at::zeros({4}, at::kLong), 4, false);
    loss_memory = tensors_.loss_sum.data_ptr();
  }
  RunningSums second(*task_, device_, EpochSums{}, true, false, tensors_);
  EXPECT_EQ(tensors_.loss_sum.data_ptr(), loss_memory) << "a recording adds into this memory";
  EXPECT_DOUBLE_EQ(second.totals(strategy_).loss_sum, 0) << "a new epoch starts from zero";
  second.add_on_device(output(2.0, 4), at::zeros({4}, at::kLong), 4, false);
  EXPECT_EQ(second.seen_here(), 0) << "the samples are the host's part";
  second.add_seen(4, false);
  RunningSums whole(*task_, device_, EpochSums{}, true, false, other_tensors_);
  whole.count(output(2.0, 4), at::zeros({4}, at::kLong), 4, false);
  const SummedFigures parts = second.totals(strategy_), one = whole.totals(strategy_);
  EXPECT_EQ(parts.loss_sum, one.loss_sum);
  EXPECT_EQ(parts.seen, one.seen);
  EXPECT_EQ(parts.statistics, one.statistics);
}

// The same tensors after a resumed epoch's carried sums and a pending group: the next epoch and
// its pending group start from zero again.
TEST_F(RunningSumsTest, AnEpochAfterCarriedSumsAndAPendingGroupStartsFromZero) {
  EpochSums carried;
  carried.loss_sum = 10;
  carried.seen = 5;
  carried.statistics = std::vector<double>(task_->statistics_size(TaskPass::training), 1.0);
  {
    RunningSums resumed(*task_, device_, carried, /*carries_them=*/true, /*accumulates=*/true, tensors_);
    resumed.count(output(1.0, 3), at::zeros({3}, at::kLong), 3, /*pending=*/true);  // left pending
    EXPECT_DOUBLE_EQ(resumed.totals(strategy_).loss_sum, 10);
  }
  RunningSums next(*task_, device_, EpochSums{}, true, /*accumulates=*/true, tensors_);
  next.commit_pending();  // what the last epoch left pending is gone
  const SummedFigures t = next.totals(strategy_);
  EXPECT_DOUBLE_EQ(t.loss_sum, 0);
  EXPECT_DOUBLE_EQ(t.seen, 0);
  EXPECT_EQ(t.statistics, std::vector<double>(t.statistics.size(), 0.0));
}

LoopState failing_step(std::int64_t step_batch) {
  LoopState state;
  state.epoch = 2;
  state.step = 6;
  state.lr = 0.1;
  state.step_batch = step_batch;
  return state;
}

TEST(BatchHalvingPolicy, HalvesWithTheLearningRateAndStopsAtTheFloorNamingEverySizeTried) {
  LoopConfig config;
  config.min_batch_size = 16;
  config.lr_scaling = LrScaling::linear;
  BatchHalvingPolicy policy(config, 64, 1);
  const BatchHalving first = policy.next("CUDA out of memory", failing_step(0));
  EXPECT_EQ(first.from, 64) << "no halving yet: the loader's batch";
  EXPECT_EQ(first.to, 32);
  EXPECT_EQ(first.step, 7) << "the failed step, 1-based";
  EXPECT_DOUBLE_EQ(first.lr_after, 0.05) << "linear scaling halves the learning rate with the batch";
  EXPECT_EQ(policy.next("again", failing_step(32)).to, 16);
  try {
    policy.next("still", failing_step(16));
    FAIL() << "8 is below data.min_batch_size";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("tried 64, 32, 16"), std::string::npos) << what;
    EXPECT_NE(what.find("data.min_batch_size = 16"), std::string::npos) << what;
  }
}

TEST(BatchHalvingPolicy, SeveralProcessesCannotHalveOnOne) {
  BatchHalvingPolicy policy(LoopConfig{}, 64, 2);
  EXPECT_THROW(policy.next("out of memory", failing_step(0)), Error);
}

}  // namespace epoch_loop_parts_test
}  // namespace plugtrain
