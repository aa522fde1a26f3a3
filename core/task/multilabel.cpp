// multilabel: a set of labels per sample, each present or not. Binary cross-entropy on the
// logits (torch.nn.BCEWithLogitsLoss); mean average precision and micro F1.
//
// Average precision needs every score of the set. To stay a sum over batches and processes, it
// is computed from per-label histograms of the scores of positives and negatives in 1,024 bins
// (torchmetrics' binned form, `thresholds=1024`): within 1/1024 of sklearn's exact figure.
#include <ATen/ATen.h>

#include "task/builtin_tasks.h"

namespace plugtrain {

namespace {

constexpr std::int64_t kBins = 1024;

class Multilabel : public SpecifiedTask {
 public:
  Multilabel(const TaskDefinition& spec, const TaskInputs& inputs, const Options& options)
      : SpecifiedTask(spec), labels_(inputs.num_classes), names_(inputs.class_names), threshold_(options.real("threshold")) {}

  std::int64_t model_outputs() const override { return labels_; }

  at::Tensor loss(const at::Tensor& outputs, const at::Tensor& targets) const override {
    check_outputs(outputs, targets, /*same_shape=*/true);
    return at::binary_cross_entropy_with_logits(outputs.reshape(targets.sizes()).to(at::kFloat), targets);
  }

  // Training: [true positives, false positives, false negatives] at the threshold. Evaluation
  // adds the histograms: positives' scores (labels x bins), then negatives'.
  std::int64_t statistics_size(TaskPass pass) const override {
    return pass == TaskPass::training ? 3 : 3 + 2 * labels_ * kBins;
  }

  at::Tensor statistics(TaskPass pass, const at::Tensor& outputs, const at::Tensor& targets) const override {
    const at::Tensor scores = outputs.detach().reshape(targets.sizes()).to(at::kFloat).sigmoid();
    const at::Tensor truth = targets.gt(0.5), predicted = scores.ge(threshold_);
    const at::Tensor counts = at::stack({predicted.logical_and(truth).sum(), predicted.logical_and(truth.logical_not()).sum(),
                                         predicted.logical_not().logical_and(truth).sum()})
                                  .to(at::kFloat);
    if (pass == TaskPass::training) return counts;
    // Bin of each score, offset by its label and by whether it is a positive.
    const at::Tensor bin = scores.mul(kBins).to(at::kLong).clamp_(0, kBins - 1);
    const at::Tensor label = at::arange(labels_, bin.options()).mul_(kBins).unsqueeze(0);
    const at::Tensor slot = bin.add(label).add_(truth.logical_not().to(at::kLong).mul_(labels_ * kBins)).reshape({-1});
    at::Tensor histograms = at::zeros({2 * labels_ * kBins}, scores.options());
    histograms.index_add_(0, slot, at::ones({slot.size(0)}, scores.options()));
    return at::cat({counts, histograms});
  }

  std::vector<MetricValue> metric_values(TaskPass pass, const std::vector<double>& totals,
                                         double samples) const override {
    (void)samples;
    const double tp = totals[0], fp = totals[1], fn = totals[2];
    const double f1 = tp > 0 ? 2 * tp / (2 * tp + fp + fn) : 0;
    if (pass == TaskPass::training) return {{"f1", f1}};
    return {{"map", mean_of_measured(average_precisions(totals))}, {"f1", f1}};
  }

  std::vector<MetricValue> per_class(const std::vector<double>& totals) const override {
    return named_per_class("ap", average_precisions(totals), names_);
  }

 private:
  // Each label's average precision from its histograms (-1: it has no positive): precision at
  // each threshold, from the highest bin down, weighted by the recall it adds.
  std::vector<double> average_precisions(const std::vector<double>& totals) const {
    std::vector<double> out(labels_, -1);
    for (std::int64_t l = 0; l < labels_; ++l) {
      const double* positives = totals.data() + 3 + l * kBins;
      const double* negatives = totals.data() + 3 + (labels_ + l) * kBins;
      double all_positives = 0;
      for (std::int64_t b = 0; b < kBins; ++b) all_positives += positives[b];
      if (all_positives <= 0) continue;
      double tp = 0, fp = 0, ap = 0;
      for (std::int64_t b = kBins - 1; b >= 0; --b) {
        tp += positives[b];
        fp += negatives[b];
        if (positives[b] > 0) ap += positives[b] / all_positives * tp / (tp + fp);
      }
      out[l] = ap;
    }
    return out;
  }

  std::int64_t labels_;
  std::vector<std::string> names_;
  double threshold_;
};

}  // namespace

TaskDefinition multilabel_task() {
  TaskDefinition spec;
  spec.name = "multilabel";
  spec.description = "a set of labels per sample: binary cross-entropy on logits; mean average precision and F1";
  spec.target_kind = DatasetTargets::multi_hot;
  spec.options = {{"threshold", OptionType::real, 0.5, "a label is predicted when its sigmoid score is at least this (F1)"}};
  spec.rules = {OptionRule("threshold").above(0).below(1)};
  spec.training_metrics = {{"f1", MetricGoal::maximize, "micro F1 of the labels predicted at the threshold"}};
  spec.evaluation_metrics = {{"map", MetricGoal::maximize, "mean over labels of average precision"},
                             spec.training_metrics[0]};
  make_with<Multilabel>(spec);
  return spec;
}

}  // namespace plugtrain
