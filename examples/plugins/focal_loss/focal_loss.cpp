// "focal": classification with the focal loss of Lin et al., "Focal Loss for Dense Object
// Detection" (2017): -(1 - p_t)^gamma * log(p_t), which turns the loss away from the samples the
// model already gets right and towards the hard ones (gamma = 0 is cross-entropy). It reports
// accuracy while training, and on the test set also balanced accuracy (the mean of the classes'
// recalls, which a rare class moves as much as a common one) and the negative log-likelihood.
//
// A complete tasks plugin: the loss, metrics made of statistics summed over batches, the
// option schema with its rules, and the factory. `[task] name = "focal"` trains with it.
#include <stdexcept>

#include <torch/types.h>

#include "plugtrain/task.h"

namespace {

using plugtrain::TaskPass;

class Focal final : public plugtrain::TaskFunctions {
 public:
  Focal(std::int64_t classes, double gamma) : classes_(classes), gamma_(gamma) {}

  std::int64_t model_outputs() const override { return classes_; }

  torch::Tensor loss(const plugtrain::TensorMap& model, const torch::Tensor& targets) const override {
    const torch::Tensor& outputs = model.at("output");
    check(outputs, targets);
    const torch::Tensor log_pt = log_probability_of_target(outputs, targets);
    // (1 - p_t) kept above 0: the gradient of x^gamma at 0 is infinite for gamma < 1.
    return (-torch::pow((1 - log_pt.exp()).clamp_min(1e-12), gamma_) * log_pt).mean();
  }

  // Training: [correct]. Evaluation: [correct, sum of -log p_t, then per class the correct
  // predictions, then per class the samples]: 2 + 2 * classes.
  std::int64_t statistics_size(TaskPass pass) const override {
    return pass == TaskPass::training ? 1 : 2 + 2 * classes_;
  }

  torch::Tensor statistics(TaskPass pass, const plugtrain::TensorMap& model,
                           const torch::Tensor& targets) const override {
    const torch::Tensor& outputs = model.at("output");
    check(outputs, targets);
    const torch::Tensor hit = outputs.argmax(1) == targets;
    const torch::Tensor correct = hit.sum().to(torch::kFloat).reshape({1});
    if (pass == TaskPass::training) return correct;
    const torch::Tensor nll = -log_probability_of_target(outputs, targets).sum().reshape({1});
    const torch::Tensor per_class_hits = torch::bincount(targets.masked_select(hit), {}, classes_).to(torch::kFloat);
    const torch::Tensor per_class_samples = torch::bincount(targets, {}, classes_).to(torch::kFloat);
    return torch::cat({correct, nll, per_class_hits, per_class_samples});
  }

  std::vector<double> metric_values(TaskPass pass, const std::vector<double>& totals, double samples) const override {
    const double n = samples > 0 ? samples : 1;
    if (pass == TaskPass::training) return {totals[0] / n};
    double recall_sum = 0;
    std::int64_t present = 0;  // classes the test set has: the others have no recall
    for (std::int64_t c = 0; c < classes_; ++c) {
      const double hits = totals[2 + c], count = totals[2 + classes_ + c];
      if (count > 0) {
        recall_sum += hits / count;
        ++present;
      }
    }
    return {totals[0] / n, present > 0 ? recall_sum / double(present) : 0, totals[1] / n};
  }

 private:
  static torch::Tensor log_probability_of_target(const torch::Tensor& outputs, const torch::Tensor& targets) {
    return torch::log_softmax(outputs.to(torch::kFloat), 1).gather(1, targets.unsqueeze(1)).squeeze(1);
  }

  void check(const torch::Tensor& outputs, const torch::Tensor& targets) const {
    if (outputs.dim() != 2 || outputs.size(1) != classes_ || targets.dim() != 1 || targets.size(0) != outputs.size(0))
      throw std::invalid_argument("task 'focal': the model gives outputs of shape " + torch::str(outputs.sizes()) +
                                  " for targets of shape " + torch::str(targets.sizes()) + "; it needs (N, " +
                                  std::to_string(classes_) + ") scores for N class indices");
  }

  std::int64_t classes_;
  double gamma_;
};

void register_tasks(plugtrain::Registrar& host) {
  plugtrain::TaskSpec spec;
  spec.name = "focal";
  spec.description = "classification with the focal loss -(1 - p_t)^gamma log p_t (Lin et al. 2017)";
  spec.targets = plugtrain::DatasetTargets::class_index;
  spec.options = {{"gamma", plugtrain::OptionType::real, 2.0, "focusing parameter: 0 is cross-entropy, larger turns to hard samples"}};
  spec.training_metrics = {{"accuracy", plugtrain::MetricGoal::maximize, "share of samples whose top class is right"}};
  spec.evaluation_metrics = {
      {"accuracy", plugtrain::MetricGoal::maximize, "share of samples whose top class is right"},
      {"balanced_accuracy", plugtrain::MetricGoal::maximize, "mean over the classes present of each class's recall"},
      {"nll", plugtrain::MetricGoal::minimize, "mean negative log-likelihood of the right class"},
  };
  spec.factory = [](const plugtrain::TargetDescription& data, const plugtrain::Options& options) {
    if (data.classes() < 2)
      throw std::invalid_argument("task.name: task 'focal' needs at least 2 classes; the data set has " +
                                  std::to_string(data.classes()));
    return std::make_unique<Focal>(data.classes(), options.real("gamma"));
  };
  // Checked by the host against the experiment's [task] table before any data is loaded.
  spec.rules = {plugtrain::OptionRule("gamma").at_least(0).at_most(10)};
  host.add_task(std::move(spec));
}

}  // namespace

PLUGTRAIN_PLUGIN(register_tasks, PLUGTRAIN_KIND_TASKS, "focal_loss", "1.0.0",
                 "the focal loss for classification (an example plugin)")
