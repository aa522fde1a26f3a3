// segmentation: a class per pixel. Per-pixel cross-entropy that skips an ignore index (as
// torchvision's segmentation references do with 255); pixel accuracy and mean IoU from a
// confusion matrix summed over the set.
#include <ATen/ATen.h>

#include "task/builtin_tasks.h"

namespace plugtrain {

namespace {

class Segmentation : public SpecifiedTask {
 public:
  Segmentation(const TaskDefinition& spec, const TaskInputs& inputs, const Options& options)
      : SpecifiedTask(spec), classes_(inputs.num_classes), names_(inputs.class_names), ignore_(options.integer("ignore_index")) {}

  std::int64_t model_outputs() const override { return classes_; }

  at::Tensor loss(const at::Tensor& outputs, const at::Tensor& targets) const override {
    check_outputs(outputs, targets, /*same_shape=*/false);
    return at::cross_entropy_loss(outputs, targets, {}, at::Reduction::Mean, ignore_);
  }

  // Training: [correct pixels, counted pixels]. Evaluation: the confusion matrix (target x
  // prediction, classes x classes) of the counted pixels.
  std::int64_t statistics_size(TaskPass pass) const override {
    return pass == TaskPass::training ? 2 : classes_ * classes_;
  }

  at::Tensor statistics(TaskPass pass, const at::Tensor& outputs, const at::Tensor& targets) const override {
    const at::Tensor predicted = outputs.detach().argmax(1);
    const at::Tensor counted = targets.ne(ignore_).logical_and(targets.ge(0)).logical_and(targets.lt(classes_));
    if (pass == TaskPass::training)
      return at::stack({predicted.eq(targets).logical_and(counted).sum(), counted.sum()}).to(at::kFloat);
    // Pixels not counted go to slot 0 with weight 0, so nothing here waits for the device.
    const at::Tensor slot = targets.mul(classes_).add_(predicted).mul_(counted).reshape({-1});
    at::Tensor confusion = at::zeros({classes_ * classes_}, outputs.options().dtype(at::kFloat));
    return confusion.index_add_(0, slot, counted.reshape({-1}).to(at::kFloat));
  }

  std::vector<MetricValue> metric_values(TaskPass pass, const std::vector<double>& totals,
                                         double samples) const override {
    (void)samples;
    if (pass == TaskPass::training) return {{"pixel_accuracy", totals[1] > 0 ? totals[0] / totals[1] : 0}};
    double correct = 0, counted = 0;
    for (std::int64_t c = 0; c < classes_; ++c) {
      correct += totals[c * classes_ + c];
      for (std::int64_t p = 0; p < classes_; ++p) counted += totals[c * classes_ + p];
    }
    return {{"miou", mean_of_measured(ious(totals))}, {"pixel_accuracy", counted > 0 ? correct / counted : 0}};
  }

  std::vector<MetricValue> per_class(const std::vector<double>& totals) const override {
    return named_per_class("iou", ious(totals), names_);
  }

 private:
  // Each class's intersection over union; -1 for a class neither in the targets nor predicted
  // (left out of the mean, as torchmetrics and mmseg do).
  std::vector<double> ious(const std::vector<double>& confusion) const {
    std::vector<double> out(classes_, -1);
    for (std::int64_t c = 0; c < classes_; ++c) {
      double in_target = 0, in_prediction = 0;
      for (std::int64_t k = 0; k < classes_; ++k) {
        in_target += confusion[c * classes_ + k];
        in_prediction += confusion[k * classes_ + c];
      }
      const double intersection = confusion[c * classes_ + c], union_ = in_target + in_prediction - intersection;
      if (union_ > 0) out[c] = intersection / union_;
    }
    return out;
  }

  std::int64_t classes_;
  std::vector<std::string> names_;
  std::int64_t ignore_;
};

}  // namespace

TaskDefinition segmentation_task() {
  TaskDefinition spec;
  spec.name = "segmentation";
  spec.description = "a class per pixel: per-pixel cross-entropy; pixel accuracy and mean IoU";
  spec.target_kind = DatasetTargets::pixel_class;
  spec.options = {{"ignore_index", OptionType::integer, std::int64_t(255),
                   "target value of pixels that count in neither loss nor metrics (torchvision's references use 255)"}};
  spec.training_metrics = {{"pixel_accuracy", MetricGoal::maximize, "share of counted pixels given their class"}};
  spec.evaluation_metrics = {{"miou", MetricGoal::maximize, "mean over classes of intersection over union"},
                             spec.training_metrics[0]};
  make_with<Segmentation>(spec);
  return spec;
}

}  // namespace plugtrain
