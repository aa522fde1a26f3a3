// The training recipe in process, as a user of it sees the results: gradient accumulation
// equals one large batch, the EMA follows timm's ModelEmaV3, mixup and CutMix follow timm's
// Mixup, the schedules follow PyTorch's, and a validation split selects while the test set is
// evaluated once at the end.
// ctest-label: unit
#include <cmath>
#include <cstdio>
#include <sstream>

#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/linear.h>

#include "data/data_error.h"
#include "data/validation_split.h"
#include "optim/optimizers.h"
#include "readers/synthetic.h"
#include "support/run_process.h"
#include "train/batch_mixer.h"
#include "train/lr_schedule.h"
#include "train/model_ema.h"
#include "train/swa.h"
#include "train/trainer.h"

namespace plugtrain {
namespace recipe_test {

class Mlp : public TensorModel {  // no batch norm: its statistics would be per micro-batch
 public:
  Mlp()
      : fc1(register_module("fc1", torch::nn::Linear(16, 12))), fc2(register_module("fc2", torch::nn::Linear(12, 3))) {}
  torch::Tensor forward(torch::Tensor x) override { return fc2(torch::relu(fc1(x.flatten(1)))); }
  torch::nn::Linear fc1, fc2;
};

struct Fitted {
  TrainSummary summary;
  std::shared_ptr<Mlp> model;
};

Fitted fit(const std::function<void(Experiment&)>& configure, data::DatasetPair data) {
  Experiment e;
  e.train.epochs = 2;
  e.data.batch_size = 32;
  e.train.log_interval = 0;
  e.experiment.seed = 5;
  e.optim.name = OptimizerName::sgd;
  e.optim.lr = 0.1;
  e.optim.momentum = 0.9;
  configure(e);
  at::manual_seed(5);
  auto model = std::make_shared<Mlp>();
  static data::DatasetPair kept;  // the trainer reads the data set while it fits
  kept = std::move(data);
  Trainer trainer(single_device_parts(e, model, kept, {}));
  return {trainer.fit(), model};
}

TEST(Accumulation, FourMicroBatchesOf32EqualOneBatchOf128) {
  // The loader's order is a function of (seed, epoch): four batches of 32 are, in order, the
  // samples of one batch of 128.
  const auto data = [] { return data::make_synthetic({1, 4, 4}, 3, 512, 64, 3); };
  const Fitted micro = fit([](Experiment& e) { e.train.accumulate_steps = 4; }, data());
  const Fitted whole = fit([](Experiment& e) { e.data.batch_size = 128; }, data());
  EXPECT_EQ(micro.summary.steps, whole.summary.steps) << "one optimizer step per group of four";
  EXPECT_EQ(whole.summary.steps, 8);
  const auto a = micro.model->parameters(), b = whole.model->parameters();
  for (std::size_t i = 0; i < a.size(); ++i)
    EXPECT_TRUE(at::allclose(a[i], b[i], 1e-5, 1e-6))
        << "parameter " << i << " differs by " << (a[i] - b[i]).abs().max().item<double>();
  EXPECT_NEAR(micro.summary.epochs.back().train_loss, whole.summary.epochs.back().train_loss, 1e-5);
  EXPECT_NEAR(micro.summary.final_test_loss, whole.summary.final_test_loss, 1e-5);
}

TEST(Accumulation, AnEpochThatDoesNotDivideEndsWithAShorterGroup) {
  // 10 batches of 32 in groups of 4: 4 + 4 + 2, three optimizer steps per epoch.
  const Fitted micro =
      fit([](Experiment& e) { e.train.accumulate_steps = 4; }, data::make_synthetic({1, 4, 4}, 3, 320, 64, 3));
  EXPECT_EQ(micro.summary.steps, 6);
  EXPECT_EQ(micro.summary.epochs.back().samples, 320);
}

TEST(ModelEmaTest, DecayWarmsUpAsTimmsModelEmaV3AndTheUpdateIsALerp) {
  Mlp model;
  ModelEma ema(model, 0.999, /*warmup=*/true);
  EXPECT_EQ(ema.decay_at(1), 0.0);  // the first update copies the weights
  EXPECT_NEAR(ema.decay_at(2), 1 - std::pow(2.0, -2.0 / 3.0), 1e-12);
  EXPECT_NEAR(ema.decay_at(11), 1 - std::pow(11.0, -2.0 / 3.0), 1e-12);
  EXPECT_EQ(ema.decay_at(10'000'000), 0.999) << "capped at ema_decay";
  EXPECT_EQ(ModelEma(model, 0.9, /*warmup=*/false).decay_at(1), 0.9);

  ModelEma plain(model, 0.9, /*warmup=*/false);
  const at::Tensor before = model.fc1->weight.detach().clone();
  {
    at::NoGradGuard no_grad;
    model.fc1->weight.add_(1.0);
  }
  plain.update(1);
  const auto averaged = plain.average().named_weights();
  ASSERT_EQ(averaged[0].first, "fc1.weight");
  EXPECT_TRUE(at::allclose(averaged[0].second, before * 0.9 + (before + 1.0) * 0.1, 1e-6, 1e-6));

  // Swapped in for an evaluation, and back.
  const at::Tensor trained = model.fc1->weight.detach().clone();
  plain.average().swap_in();
  EXPECT_TRUE(at::allclose(model.fc1->weight, averaged[0].second));
  plain.average().swap_out();
  EXPECT_TRUE(at::equal(model.fc1->weight, trained));
}

TEST(ModelEmaTest, ARunEvaluatesWithTheAverageWhenAsked) {
  const auto data = [] { return data::make_synthetic({1, 4, 4}, 3, 256, 64, 3); };
  const Fitted with_ema = fit([](Experiment& e) { e.train.ema_decay = 0.99; }, data());
  const Fitted without = fit([](Experiment&) {}, data());
  const Fitted not_evaluated = fit(
      [](Experiment& e) {
        e.train.ema_decay = 0.99;
        e.train.ema_evaluate = false;
      },
      data());
  EXPECT_TRUE(with_ema.summary.ema_evaluated);
  EXPECT_FALSE(not_evaluated.summary.ema_evaluated);
  // The EMA changes what is evaluated, not what is trained.
  EXPECT_NE(with_ema.summary.final_test_loss, without.summary.final_test_loss);
  EXPECT_DOUBLE_EQ(not_evaluated.summary.final_test_loss, without.summary.final_test_loss);
  const auto a = with_ema.model->parameters(), b = without.model->parameters();
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(at::equal(a[i], b[i]));
}

TEST(Swa, AveragesTheEpochsEquallyFromItsStartAndRunsEndWithTheAverage) {
  Mlp model;
  StochasticWeightAverage swa(model, /*start_epoch=*/2);
  std::vector<at::Tensor> seen;
  for (std::int64_t epoch = 1; epoch <= 4; ++epoch) {
    {
      at::NoGradGuard no_grad;
      model.fc1->weight.fill_(double(epoch));
    }
    swa.after_epoch(epoch);
  }
  EXPECT_EQ(swa.count(), 3);
  EXPECT_TRUE(at::allclose(swa.average().named_weights()[0].second, at::full({12, 16}, 3.0)))  // (2 + 3 + 4) / 3
      << "epoch 1 is before swa_start";

  const auto data = [] { return data::make_synthetic({1, 4, 4}, 3, 256, 64, 3); };
  const Fitted run = fit(
      [](Experiment& e) {
        e.train.epochs = 4;
        e.train.swa_start = 3;
        e.train.swa_lr = 0.05;
      },
      data());
  EXPECT_EQ(run.summary.swa_epochs, 2);
  EXPECT_EQ(run.summary.epochs.back().lr, 0.05) << "the learning rate held at swa_lr";
}

// A cumulative average over the batches, as torch.optim.swa_utils.update_bn computes it.
TEST(Swa, BatchNormIsRecomputedOverTheTrainingSet) {
  struct WithBatchNorm : TensorModel {
    WithBatchNorm() : bn(register_module("bn", torch::nn::BatchNorm2d(2))) {}
    torch::Tensor forward(torch::Tensor x) override { return bn(x).flatten(1); }
    torch::nn::BatchNorm2d bn;
  } model;
  data::DatasetPair d = data::make_synthetic({2, 4, 4}, 3, 90, 10, 3);
  data::BatchLoader batches(d.train, 40, /*shuffle=*/false, data::AugmentOptions{}, LoaderConfig{},
                            c10::Device(c10::kCPU), 0, data::Shard{}, at::MemoryFormat::Contiguous, nullptr);
  ASSERT_TRUE(recompute_batch_norm(model, batches));
  // Batches of 40, 40 and 10: each batch's mean, weighted equally (cumulative moving average).
  const at::Tensor x = d.train.images;
  const at::Tensor expected =
      (x.narrow(0, 0, 40).mean({0, 2, 3}) + x.narrow(0, 40, 40).mean({0, 2, 3}) + x.narrow(0, 80, 10).mean({0, 2, 3})) /
      3;
  EXPECT_TRUE(at::allclose(model.bn->running_mean, expected, 1e-5, 1e-6));
  EXPECT_EQ(model.bn->options.momentum(), 0.1) << "the layer's momentum is put back";
}

data::Batch image_batch() {
  data::Batch b;
  b.inputs = at::arange(8 * 3 * 8 * 8, at::kFloat).reshape({8, 3, 8, 8});
  b.targets = at::tensor(std::vector<std::int64_t>{0, 1, 2, 3, 0, 1, 2, 3});
  return b;
}

TEST(Mixing, MixupBlendsEachSampleWithItsPartnerInTheReversedBatch) {
  BatchMixer mixer({/*mixup_alpha=*/0.4, 0, 1.0, 0.5, /*classes=*/4, /*seed=*/7});
  const data::Batch b = image_batch();
  const MixedBatch m = mixer.mix(b, 1, 0);
  ASSERT_LT(m.lam, 1.0);
  EXPECT_FALSE(m.cutmix);
  EXPECT_TRUE(at::allclose(m.batch.inputs, b.inputs * m.lam + b.inputs.flip(0) * (1 - m.lam)));
  const at::Tensor onehot = at::one_hot(b.targets, 4).to(at::kFloat);
  EXPECT_TRUE(at::allclose(m.batch.targets, onehot * m.lam + onehot.flip(0) * (1 - m.lam)));
  EXPECT_TRUE(at::allclose(m.batch.targets.sum(1), at::ones({8})));
  // Seeded by (seed, epoch, batch): the same batch mixes the same way again, another differently.
  EXPECT_EQ(mixer.mix(b, 1, 0).lam, m.lam);
  EXPECT_NE(mixer.mix(b, 1, 1).lam, m.lam);
}

TEST(Mixing, CutMixPastesABoxAndItsLamIsTheBoxsTrueShare) {
  BatchMixer mixer({0, /*cutmix_alpha=*/1.0, 1.0, 0.5, 4, 11});
  const data::Batch b = image_batch();
  for (std::int64_t index = 0; index < 20; ++index) {
    const MixedBatch m = mixer.mix(b, 2, index);
    ASSERT_TRUE(m.cutmix);
    const at::Tensor pasted = m.batch.inputs.ne(b.inputs).any(1);  // (N, H, W): pixels from the partner
    const double share = pasted[0].to(at::kFloat).mean().item<double>();
    EXPECT_NEAR(1 - m.lam, share, 1e-9) << "batch " << index;
  }
}

TEST(Mixing, ProbabilityZeroLeavesEveryBatchAlone) {
  BatchMixer mixer({0.4, 1.0, /*prob=*/0.0, 0.5, 4, 1});
  const MixedBatch m = mixer.mix(image_batch(), 0, 0);
  EXPECT_EQ(m.lam, 1.0);
  EXPECT_EQ(m.batch.targets.scalar_type(), at::kLong);
}

LoopConfig schedule(ScheduleName name, std::int64_t epochs = 2) {
  LoopConfig c;
  c.epochs = epochs;
  c.schedule.name = name;
  return c;
}

TEST(Schedules, LinearDecaysToMinLrAndWarmUpCountsSteps) {
  LoopConfig c = schedule(ScheduleName::linear);
  c.schedule.min_lr = 0.01;
  EXPECT_DOUBLE_EQ(scheduled_lr(c, 1.0, 0, 50), 1.0);
  EXPECT_NEAR(scheduled_lr(c, 1.0, 50, 50), 0.505, 1e-12);
  EXPECT_NEAR(scheduled_lr(c, 1.0, 100, 50), 0.01, 1e-12);
  c.schedule.warmup_steps = 10;
  EXPECT_NEAR(scheduled_lr(c, 1.0, 0, 50), 0.1, 1e-12);
  EXPECT_NEAR(scheduled_lr(c, 1.0, 9, 50), 1.0, 1e-12);
  EXPECT_NEAR(scheduled_lr(c, 1.0, 10, 50), 1.0, 1e-12);
}

// The learning rates PyTorch's OneCycleLR gives, from Python, against ours for the same steps.
TEST(Schedules, OneCycleIsPyTorchsOneCycleLR) {
#ifndef PLUGTRAIN_PYTHON
  GTEST_SKIP() << "no Python beside the torch wheel";
#else
  const std::string script =
      "import torch\n"
      "p = torch.nn.Parameter(torch.zeros(1))\n"
      "o = torch.optim.SGD([p], lr=0.1)\n"
      "s = torch.optim.lr_scheduler.OneCycleLR(o, max_lr=0.1, total_steps=40, pct_start=0.25, div_factor=10, "
      "final_div_factor=100)\n"
      "for i in range(40):\n"
      "    print(repr(o.param_groups[0]['lr']))\n"
      "    o.step(); s.step()\n";
  const std::string file = ::testing::TempDir() + "/one_cycle.py";
  std::FILE* f = std::fopen(file.c_str(), "w");
  std::fputs(script.c_str(), f);
  std::fclose(f);
  const testing::ProcessResult python = testing::run_process(std::string(PLUGTRAIN_PYTHON) + " " + file);
  ASSERT_EQ(python.exit_code, 0) << python.out;
  LoopConfig c = schedule(ScheduleName::onecycle, 4);
  c.schedule.pct_start = 0.25;
  c.schedule.div_factor = 10;
  c.schedule.final_div_factor = 100;
  std::istringstream lines(python.out);
  double expected = 0;
  for (int step = 0; step < 40 && lines >> expected; ++step)
    EXPECT_NEAR(scheduled_lr(c, 0.1, step, 10), expected, 1e-12) << "step " << step;
#endif
}

TEST(ValidationSplit, IsSeededDisjointAndKeepsEverySample) {
  data::DatasetPair d = data::make_synthetic({1, 4, 4}, 3, 100, 20, 3);
  d.train.labels = at::arange(100, at::kLong) % 3;
  const at::Tensor marks = d.train.images.flatten(1).sum(1);  // each sample's own value
  data::Dataset train = d.train;
  const data::Dataset val = data::split_validation(train, 0.2, 9);
  EXPECT_EQ(val.size(), 20);
  EXPECT_EQ(train.size(), 80);
  data::Dataset again = d.train;
  EXPECT_TRUE(at::equal(data::split_validation(again, 0.2, 9).images, val.images)) << "the same seed, the same split";
  data::Dataset other = d.train;
  EXPECT_FALSE(at::equal(data::split_validation(other, 0.2, 10).images, val.images));
  const at::Tensor all = at::cat({train.images.flatten(1).sum(1), val.images.flatten(1).sum(1)});
  EXPECT_TRUE(at::allclose(std::get<0>(all.sort()), std::get<0>(marks.sort()))) << "every sample in one part";
  data::Dataset small = d.train;
  EXPECT_THROW(data::split_validation(small, 0.001, 1), Error);
}

TEST(ValidationSplit, SelectsWhileTheTestSetIsEvaluatedAtTheEnd) {
  data::DatasetPair d = data::make_synthetic({1, 4, 4}, 3, 256, 64, 3);
  d.val = data::split_validation(d.train, 0.25, 5);
  const Fitted run = fit([](Experiment& e) { e.train.epochs = 3; }, d);
  EXPECT_EQ(run.summary.selection_split, "val");
  ASSERT_EQ(run.summary.epochs.size(), 3u);
  for (const EpochMetrics& m : run.summary.epochs) EXPECT_TRUE(m.val_loss.has_value()) << "epoch " << m.epoch;
  EXPECT_FALSE(run.summary.epochs[0].test_loss) << "the test set chooses nothing, so it waits for the end";
  EXPECT_FALSE(run.summary.epochs[1].test_loss);
  EXPECT_TRUE(run.summary.epochs[2].test_loss);
  EXPECT_EQ(run.summary.tested_epoch, 3);
  EXPECT_FALSE(run.summary.final_test.empty());
  EXPECT_FALSE(run.summary.final_val.empty());

  data::DatasetPair every = data::make_synthetic({1, 4, 4}, 3, 256, 64, 3);
  every.val = data::split_validation(every.train, 0.25, 5);
  const Fitted tested = fit(
      [](Experiment& e) {
        e.train.epochs = 3;
        e.train.test_every = 1;
      },
      every);
  for (const EpochMetrics& m : tested.summary.epochs) EXPECT_TRUE(m.test_loss.has_value()) << "epoch " << m.epoch;
}

}  // namespace recipe_test
}  // namespace plugtrain
