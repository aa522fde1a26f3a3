// classification: one class per sample. Cross-entropy with label smoothing and class weights
// (torch.nn.CrossEntropyLoss); top-1 and top-5 accuracy, and each class's accuracy.
#include <ATen/ATen.h>

#include "config/config_error.h"
#include "task/builtin_tasks.h"

namespace plugtrain {

namespace {

class Classification : public SpecifiedTask {
 public:
  Classification(const TaskDefinition& spec, const TaskInputs& inputs, const Options& options)
      : SpecifiedTask(spec),
        classes_(inputs.num_classes),
        class_names_(inputs.class_names),
        label_smoothing_(options.real("label_smoothing")) {
    const auto& weights = options.get<std::vector<double>>("class_weights");
    if (weights.empty()) return;
    if (std::int64_t(weights.size()) != classes_)
      throw ConfigError("task.class_weights", std::to_string(weights.size()) + " weights for a data set of " +
                        std::to_string(classes_) + " classes (give one per class, or none)");
    weights_ = at::tensor(weights, at::kFloat);
  }

  std::int64_t model_outputs() const override { return classes_; }

  void to(c10::Device device) override {
    if (weights_.defined()) weights_ = weights_.to(device);
  }

  at::Tensor loss(const at::Tensor& outputs, const at::Tensor& targets) const override {
    // Class probabilities per sample (mixup and CutMix mix the one-hot targets): soft targets,
    // which cross_entropy smooths the same way.
    if (targets.is_floating_point() && targets.sizes() == outputs.sizes())
      return at::cross_entropy_loss(outputs, targets, weights_, at::Reduction::Mean, -100, label_smoothing_);
    check_outputs(outputs, targets, /*same_shape=*/false);
    return at::cross_entropy_loss(outputs, targets, weights_, at::Reduction::Mean, -100, label_smoothing_);
  }

  // Training: [top-1 hits]. Evaluation: [top-1 hits, top-5 hits, hits per class (C), samples per class (C)].
  std::int64_t statistics_size(TaskPass pass) const override {
    return pass == TaskPass::training ? 1 : 2 + 2 * classes_;
  }

  at::Tensor statistics(TaskPass pass, const at::Tensor& outputs, const at::Tensor& targets) const override {
    const at::Tensor hits = outputs.argmax(1).eq(targets);
    if (pass == TaskPass::training) return hits.sum().reshape({1});
    const std::int64_t k = std::min<std::int64_t>(5, outputs.size(1));
    const at::Tensor top5 = std::get<1>(outputs.topk(k, 1)).eq(targets.unsqueeze(1)).any(1);
    const auto options = at::TensorOptions().dtype(at::kFloat).device(outputs.device());
    at::Tensor per_class = at::zeros({2, classes_}, options);
    per_class[0].index_add_(0, targets, hits.to(at::kFloat));
    per_class[1].index_add_(0, targets, at::ones({targets.size(0)}, options));
    return at::cat({hits.sum().reshape({1}).to(at::kFloat), top5.sum().reshape({1}).to(at::kFloat), per_class.reshape({-1})});
  }

  std::vector<MetricValue> metric_values(TaskPass pass, const std::vector<double>& totals,
                                         double samples) const override {
    const double n = samples > 0 ? samples : 1;
    if (pass == TaskPass::training) return {{"accuracy", totals[0] / n}};
    return {{"accuracy", totals[0] / n}, {"top5_accuracy", totals[1] / n}};
  }

  std::vector<MetricValue> per_class(const std::vector<double>& totals) const override {
    std::vector<double> accuracy(classes_);
    for (std::int64_t c = 0; c < classes_; ++c) {
      const double samples = totals[2 + classes_ + c];
      accuracy[c] = samples > 0 ? totals[2 + c] / samples : -1;  // -1: no sample of the class
    }
    return named_per_class("accuracy", accuracy, class_names_);
  }

 private:
  std::int64_t classes_;
  std::vector<std::string> class_names_;
  double label_smoothing_;
  at::Tensor weights_;  // undefined: every class weighs 1
};

}  // namespace

TaskDefinition classification_task() {
  TaskDefinition spec;
  spec.name = "classification";
  spec.description = "one class per sample: cross-entropy; accuracy, top-5 accuracy and each class's accuracy";
  spec.target_kind = DatasetTargets::class_index;
  spec.options = {
      {"label_smoothing", OptionType::real, 0.0,
       "share of each target spread evenly over all classes (torch.nn.CrossEntropyLoss's label_smoothing)"},
      {"class_weights", OptionType::real_list, std::vector<double>{},
       "one weight per class for the loss (empty: all 1), as CrossEntropyLoss's weight"},
  };
  spec.rules = {OptionRule("label_smoothing").at_least(0).below(1), OptionRule("class_weights").at_least(0)};
  spec.training_metrics = {{"accuracy", MetricGoal::maximize, "share of samples whose highest output is their class"}};
  spec.evaluation_metrics = {
      spec.training_metrics[0],
      {"top5_accuracy", MetricGoal::maximize, "share of samples whose class is among the five highest outputs"}};
  make_with<Classification>(spec);
  return spec;
}

}  // namespace plugtrain
