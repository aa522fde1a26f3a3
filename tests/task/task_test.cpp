// The built-in tasks' losses and metrics against the formulas they promise (PyTorch's losses,
// sklearn's metrics), each summed over two batches as the loop sums them: a metric that did
// not add up over batches (and so over ddp's processes) would differ from the whole set's.
// ctest-label: unit
#include <algorithm>
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "config/config_error.h"
#include "task/task_registry.h"

namespace plugtrain {
namespace task_test {

std::unique_ptr<Task> task_named(const std::string& name, const TaskInputs& inputs,
                                 std::map<std::string, OptionValue> options = {}) {
  const TaskDefinition& spec = *find_task(name);
  std::map<std::string, OptionValue> values = default_options(spec).values();
  for (auto& [k, v] : options) values[k] = v;
  return spec.factory(inputs, Options(values));
}

// A pass's metrics over `outputs` and `targets` fed in two batches.
std::vector<MetricValue> in_two_batches(const Task& task, TaskPass pass, const at::Tensor& outputs,
                                        const at::Tensor& targets, std::vector<double>* totals_out = nullptr) {
  const std::int64_t n = outputs.size(0), half = n / 2;
  const at::Tensor sums =
      task.statistics(pass, outputs.narrow(0, 0, half), targets.narrow(0, 0, half)).to(at::kDouble) +
      task.statistics(pass, outputs.narrow(0, half, n - half), targets.narrow(0, half, n - half));
  EXPECT_EQ(sums.numel(), task.statistics_size(pass));
  std::vector<double> totals(sums.data_ptr<double>(), sums.data_ptr<double>() + sums.numel());
  if (totals_out) *totals_out = totals;
  return task.metric_values(pass, totals, double(n));
}

double value_of(const std::vector<MetricValue>& values, const std::string& name) {
  for (const auto& v : values)
    if (v.name == name) return v.value;
  ADD_FAILURE() << "no metric " << name;
  return NAN;
}

TEST(Tasks, ClassificationIsCrossEntropyWithSmoothingAndWeightsAndCountsTop1Top5AndEachClass) {
  at::manual_seed(1);
  const std::int64_t classes = 7;
  const at::Tensor logits = at::randn({50, classes}), targets = at::randint(classes, {50});
  const std::vector<double> weights = {1, 2, 0.5, 1, 1, 3, 1};
  auto task = task_named("classification", {classes, {}, {"a", "b", "c", "d", "e", "f", "g"}},
                         {{"label_smoothing", 0.1}, {"class_weights", weights}});
  EXPECT_EQ(task->model_outputs(), classes);
  const at::Tensor expected =
      at::cross_entropy_loss(logits, targets, at::tensor(weights, at::kFloat), at::Reduction::Mean, -100, 0.1);
  EXPECT_NEAR(task->loss(logits, targets).item<double>(), expected.item<double>(), 1e-6);

  std::vector<double> totals;
  const auto metrics = in_two_batches(*task, TaskPass::evaluation, logits, targets, &totals);
  const at::Tensor predicted = logits.argmax(1);
  EXPECT_NEAR(value_of(metrics, "accuracy"), predicted.eq(targets).to(at::kDouble).mean().item<double>(), 1e-12);
  const at::Tensor top5 = std::get<1>(logits.topk(5, 1)).eq(targets.unsqueeze(1)).any(1);
  EXPECT_NEAR(value_of(metrics, "top5_accuracy"), top5.to(at::kDouble).mean().item<double>(), 1e-12);
  EXPECT_GT(value_of(metrics, "top5_accuracy"), value_of(metrics, "accuracy"));
  for (const MetricValue& v : task->per_class(totals)) {
    const std::int64_t c = v.name.back() - 'a';
    const at::Tensor mine = targets.eq(c);
    EXPECT_EQ(v.name.substr(0, 9), "accuracy/");
    EXPECT_NEAR(v.value, predicted.eq(targets).logical_and(mine).sum().item<double>() / mine.sum().item<double>(),
                1e-12)
        << v.name;
  }
  EXPECT_NEAR(value_of(in_two_batches(*task, TaskPass::training, logits, targets), "accuracy"),
              value_of(metrics, "accuracy"), 1e-12);
}

TEST(Tasks, ClassWeightsMustBeOnePerClass) {
  try {
    task_named("classification", {10, {}, {}}, {{"class_weights", std::vector<double>{1, 2}}});
    FAIL() << "accepted 2 weights for 10 classes";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("task.class_weights: 2 weights for a data set of 10 classes", 0), 0u)
        << e.what();
  }
}

TEST(Tasks, RegressionLossesAndMaeRmseAndR2AreSklearns) {
  at::manual_seed(2);
  const at::Tensor targets = at::randn({40, 3}), outputs = targets + 0.3 * at::randn({40, 3});
  for (const auto& [loss, reference] : std::vector<std::pair<std::string, at::Tensor>>{
           {"mse", at::mse_loss(outputs, targets)},
           {"l1", at::l1_loss(outputs, targets)},
           {"huber", at::huber_loss(outputs, targets, at::Reduction::Mean, 0.5)}}) {
    auto task = task_named("regression", {0, {3}, {}}, {{"loss", loss}, {"huber_delta", 0.5}});
    EXPECT_EQ(task->model_outputs(), 3);
    EXPECT_NEAR(task->loss(outputs, targets).item<double>(), reference.item<double>(), 1e-6) << loss;
  }
  auto task = task_named("regression", {0, {3}, {}});
  const auto metrics = in_two_batches(*task, TaskPass::evaluation, outputs, targets);
  const at::Tensor e = (outputs - targets).to(at::kDouble), y = targets.to(at::kDouble);
  EXPECT_NEAR(value_of(metrics, "mae"), e.abs().mean().item<double>(), 1e-6);
  EXPECT_NEAR(value_of(metrics, "rmse"), e.square().mean().sqrt().item<double>(), 1e-6);
  // sklearn's r2_score, multioutput="uniform_average": each column's 1 - SSE/SST, averaged.
  const at::Tensor r2 = 1 - e.square().sum(0) / (y - y.mean(0)).square().sum(0);
  EXPECT_NEAR(value_of(metrics, "r2"), r2.mean().item<double>(), 1e-6);
}

TEST(Tasks, MultilabelMeanAveragePrecisionIsSklearnsWithinItsBinsAndF1IsMicro) {
  at::manual_seed(3);
  const std::int64_t labels = 5, n = 400;
  const at::Tensor targets = at::rand({n, labels}).lt(0.3).to(at::kFloat);
  const at::Tensor logits = 2 * targets - 1 + 1.5 * at::randn({n, labels});
  auto task = task_named("multilabel", {labels, {labels}, {}});
  EXPECT_NEAR(task->loss(logits, targets).item<double>(),
              at::binary_cross_entropy_with_logits(logits, targets).item<double>(), 1e-6);
  const auto metrics = in_two_batches(*task, TaskPass::evaluation, logits, targets);
  // sklearn's average_precision_score per label: sum over thresholds of (R_k - R_{k-1}) P_k.
  double map = 0;
  for (std::int64_t l = 0; l < labels; ++l) {
    const at::Tensor order = logits.select(1, l).argsort(0, /*descending=*/true);
    const at::Tensor hits = targets.select(1, l).index_select(0, order).to(at::kDouble);
    const at::Tensor precision = hits.cumsum(0) / at::arange(1, n + 1, at::kDouble);
    map += (precision * hits).sum().item<double>() / hits.sum().item<double>();
  }
  EXPECT_NEAR(value_of(metrics, "map"), map / labels, 0.01);
  const at::Tensor predicted = logits.sigmoid().ge(0.5), truth = targets.gt(0.5);
  const double tp = predicted.logical_and(truth).sum().item<double>();
  const double f1 = 2 * tp / (predicted.sum().item<double>() + truth.sum().item<double>());
  EXPECT_NEAR(value_of(metrics, "f1"), f1, 1e-9);
}

TEST(Tasks, SegmentationSkipsTheIgnoreIndexAndMeasuresPixelAccuracyAndMeanIou) {
  at::manual_seed(4);
  const std::int64_t classes = 4;
  at::Tensor targets = at::randint(classes, {6, 8, 8});
  targets.index_put_({at::rand({6, 8, 8}).lt(0.1)}, 255);
  const at::Tensor logits =
      at::randn({6, classes, 8, 8}) + 2 * at::one_hot(targets.clamp_max(classes - 1), classes).permute({0, 3, 1, 2});
  auto task = task_named("segmentation", {classes, {8, 8}, {}});
  EXPECT_NEAR(task->loss(logits, targets).item<double>(),
              at::cross_entropy_loss(logits, targets, {}, at::Reduction::Mean, 255).item<double>(), 1e-6);
  const auto metrics = in_two_batches(*task, TaskPass::evaluation, logits, targets);
  const at::Tensor counted = targets.ne(255), predicted = logits.argmax(1);
  EXPECT_NEAR(value_of(metrics, "pixel_accuracy"),
              predicted.eq(targets).logical_and(counted).sum().item<double>() / counted.sum().item<double>(), 1e-12);
  double iou = 0;
  for (std::int64_t c = 0; c < classes; ++c) {
    const at::Tensor t = targets.eq(c), p = predicted.eq(c).logical_and(counted);
    iou += t.logical_and(p).sum().item<double>() / t.logical_or(p).sum().item<double>();
  }
  EXPECT_NEAR(value_of(metrics, "miou"), iou / classes, 1e-12);
}

// Per-step scores whose best path is `path` (one output per step).
at::Tensor scores_for(const std::vector<std::vector<std::int64_t>>& paths, std::int64_t outputs) {
  at::Tensor scores = at::zeros({std::int64_t(paths.size()), std::int64_t(paths[0].size()), outputs});
  for (std::size_t i = 0; i < paths.size(); ++i)
    for (std::size_t t = 0; t < paths[i].size(); ++t) scores[i][t][paths[i][t]] = 5.0;
  return scores;
}

TEST(Tasks, SequenceIsCtcWithTheBlankLastAndMeasuresEditDistancesOfTheGreedyDecoding) {
  const std::int64_t classes = 4, blank = classes;  // outputs 0-3 are the classes, 4 the blank
  auto task = task_named("sequence", {classes, {3}, {}});
  EXPECT_EQ(task->model_outputs(), classes + 1);
  // Best paths: "1 1 _ 2" decodes to [1, 2]; "3 _ 3 0" to [3, 3, 0]; "_ _ _ _" to [].
  const at::Tensor outputs =
      scores_for({{1, 1, blank, 2}, {3, blank, 3, 0}, {blank, blank, blank, blank}}, classes + 1);
  const at::Tensor targets = at::tensor({1, 2, -1, 3, 0, -1, 2, -1, -1}, at::kLong).view({3, 3});
  const auto metrics = task->metric_values(
      TaskPass::evaluation,
      [&] {
        const at::Tensor s = task->statistics(TaskPass::evaluation, outputs, targets);
        return std::vector<double>(s.data_ptr<double>(), s.data_ptr<double>() + s.numel());
      }(),
      3);
  // Edits: [1,2] vs [1,2] 0; [3,3,0] vs [3,0] 1; [] vs [2] 1. Target classes 5; glosses the same.
  EXPECT_NEAR(value_of(metrics, "cer"), 2.0 / 5.0, 1e-12);
  EXPECT_NEAR(value_of(metrics, "wer"), 2.0 / 5.0, 1e-12) << "every class is a word without a separator";
  EXPECT_NEAR(value_of(metrics, "sequence_accuracy"), 1.0 / 3.0, 1e-12);
  const at::Tensor log_probs = outputs.log_softmax(2).transpose(0, 1);
  const at::Tensor reference = at::ctc_loss(log_probs, targets.clamp_min(0), at::full({3}, 4, at::kLong),
                                            at::tensor({2, 2, 1}, at::kLong), blank, at::Reduction::Mean, true);
  EXPECT_NEAR(task->loss(outputs, targets).item<double>(), reference.item<double>(), 1e-6);

  // The blank first: class c is output c + 1.
  auto first = task_named("sequence", {classes, {3}, {}}, {{"blank", std::int64_t(0)}});
  const at::Tensor shifted = scores_for({{2, 2, 0, 3}, {4, 0, 4, 1}, {0, 0, 0, 0}}, classes + 1);
  const at::Tensor s = first->statistics(TaskPass::training, shifted, targets);
  EXPECT_EQ(s[0].item<double>(), 2.0) << "the same decodings";
  EXPECT_NEAR(first->loss(shifted, targets).item<double>(),
              at::ctc_loss(shifted.log_softmax(2).transpose(0, 1), (targets + 1).clamp_min(0),
                           at::full({3}, 4, at::kLong), at::tensor({2, 2, 1}, at::kLong), 0, at::Reduction::Mean, true)
                  .item<double>(),
              1e-6);
}

// A model that gives output_lengths (SDK 3.6, for variable-length inputs): CTC reads each
// sample's first steps only, and decoding ignores the steps after them.
TEST(Tasks, SequenceReadsOnlyEachSamplesStepsWhenTheModelGivesTheirLengths) {
  const std::int64_t classes = 4, blank = classes;
  auto task = task_named("sequence", {classes, {3}, {}});
  // Real steps 4, 2 and 3; what follows them would decode to more classes if it were read.
  const at::Tensor outputs = scores_for({{1, 1, blank, 2}, {3, 0, 2, 2}, {2, blank, 1, 3}}, classes + 1);
  const at::Tensor targets = at::tensor({1, 2, -1, 3, 0, -1, 2, 1, -1}, at::kLong).view({3, 3});
  const at::Tensor lengths = at::tensor({4, 2, 3}, at::kLong);
  const TensorMap more = {{"output_lengths", lengths}};
  const at::Tensor s = task->statistics(TaskPass::evaluation, outputs, targets, more);
  EXPECT_EQ(s[0].item<double>(), 0.0) << "every sample decodes exactly within its steps";
  EXPECT_EQ(s[4].item<double>(), 3.0);
  EXPECT_GT(task->statistics(TaskPass::evaluation, outputs, targets)[0].item<double>(), 0.0)
      << "all steps read: errors";
  const at::Tensor reference = at::ctc_loss(outputs.log_softmax(2).transpose(0, 1), targets.clamp_min(0), lengths,
                                            at::tensor({2, 2, 2}, at::kLong), blank, at::Reduction::Mean, true);
  EXPECT_NEAR(task->loss(outputs, targets, more).item<double>(), reference.item<double>(), 1e-6);
  EXPECT_THROW(task->loss(outputs, targets, {{"output_lengths", at::tensor({4, 2}, at::kLong)}}), Error);
}

TEST(Tasks, SequenceWordErrorRateSplitsAtTheSeparator) {
  auto task = task_named("sequence", {5, {5}, {}}, {{"word_separator", std::int64_t(0)}});
  // Decoded [1, 0, 2, 3] = words (1)(2 3); target [1, 0, 2, 4] = (1)(2 4): one word of two wrong.
  const at::Tensor outputs = scores_for({{1, 5, 0, 5, 2, 5, 3}}, 6);
  const at::Tensor targets = at::tensor({1, 0, 2, 4, -1}, at::kLong).view({1, 5});
  const at::Tensor s = task->statistics(TaskPass::evaluation, outputs, targets);
  const auto metrics =
      task->metric_values(TaskPass::evaluation, std::vector<double>(s.data_ptr<double>(), s.data_ptr<double>() + 5), 1);
  EXPECT_NEAR(value_of(metrics, "cer"), 1.0 / 4.0, 1e-12);
  EXPECT_NEAR(value_of(metrics, "wer"), 1.0 / 2.0, 1e-12);
}

TEST(Tasks, ADataSetWhoseTargetsAreNotTheTasksKindIsRefusedByName) {
  try {
    make_task(*find_task("regression"), default_options(*find_task("regression")), {10, {}, {}},
              DatasetTargets::class_index, "fashion-mnist");
    FAIL() << "regression accepted class labels";
  } catch (const ConfigError& e) {
    EXPECT_EQ(
        std::string(e.what()),
        "task.name: task 'regression' learns real values per sample, but data set 'fashion-mnist' gives one class "
        "per sample (choose a task for its targets)");
  }
}

TEST(Tasks, OutputsThatDoNotFitTheTargetsAreAnErrorNamingBothShapes) {
  auto task = task_named("regression", {0, {}, {}});
  try {
    task->loss(at::zeros({4, 10}), at::zeros({4}));
    FAIL();
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("task 'regression': the model outputs 4x10 for a batch whose targets are 4"),
              std::string::npos)
        << e.what();
  }
}

// Bits per byte: the summed bits over the summed UTF-8 bytes of the target tokens, each token's
// bytes from its text. Uniform scores over 4 tokens cost log2(4) = 2 bits each; the targets
// "<0x41>" (a byte piece: 1 byte), "ab" (2), "é" (2) and a control piece "" (0), and one left
// out (-1): 8 bits over 5 bytes = 1.6 exactly, against 2 bits per token.
TEST(Tasks, LanguageModelBitsPerByteCountEachTargetTokensBytes) {
  auto task = task_named("language_model", {4, {}, {"<0x41>", "ab", "\xc3\xa9", ""}});
  const at::Tensor scores = at::zeros({2, 5, 4});
  const at::Tensor targets = at::tensor({0, 1, 2, 3, -1, 0, 1, 2, 3, -1}, at::kLong).view({2, 5});
  const auto metrics = in_two_batches(*task, TaskPass::evaluation, scores, targets);
  EXPECT_NEAR(value_of(metrics, "bits_per_token"), 2.0, 1e-6);
  EXPECT_NEAR(value_of(metrics, "bits_per_byte"), 1.6, 1e-6);
  // Ids without text (a tokens data set without itos, named by their numbers): no figure.
  auto numbered = task_named("language_model", {4, {}, {"0", "1", "2", "3"}});
  EXPECT_TRUE(std::isnan(value_of(in_two_batches(*numbered, TaskPass::evaluation, scores, targets), "bits_per_byte")));
}

}  // namespace task_test
}  // namespace plugtrain
