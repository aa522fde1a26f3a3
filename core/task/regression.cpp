// regression: real values per sample. MSE, L1 or Huber loss; mean absolute error, root mean
// squared error, and R² (each output's, averaged, as sklearn's r2_score does).
#include <cmath>

#include <ATen/ATen.h>

#include "task/builtin_tasks.h"
#include "util/error.h"

namespace plugtrain {

namespace {

enum class RegressionLoss { mse, l1, huber };

RegressionLoss loss_named(const std::string& word) {
  if (word == "l1") return RegressionLoss::l1;
  if (word == "huber") return RegressionLoss::huber;
  return RegressionLoss::mse;
}

class Regression : public SpecifiedTask {
 public:
  Regression(const TaskDefinition& spec, const TaskInputs& inputs, const Options& options)
      : SpecifiedTask(spec), loss_(loss_named(options.string("loss"))), delta_(options.real("huber_delta")) {
    for (auto d : inputs.target_shape) outputs_ *= d;
  }

  std::int64_t model_outputs() const override { return outputs_; }

  at::Tensor loss(const at::Tensor& outputs, const at::Tensor& targets) const override {
    check_outputs(outputs, targets, /*same_shape=*/true);
    const at::Tensor predicted = outputs.reshape(targets.sizes()).to(at::kFloat);
    switch (loss_) {
      case RegressionLoss::l1: return at::l1_loss(predicted, targets);
      case RegressionLoss::huber: return at::huber_loss(predicted, targets, at::Reduction::Mean, delta_);
      case RegressionLoss::mse: break;
    }
    return at::mse_loss(predicted, targets);
  }

  // Training: [sum |e|, sum e²] over every value. Evaluation adds, per output d:
  // [sum y_d, sum y_d², sum e_d²] (R² needs each output's variance).
  std::int64_t statistics_size(TaskPass pass) const override {
    return pass == TaskPass::training ? 2 : 2 + 3 * outputs_;
  }

  at::Tensor statistics(TaskPass pass, const at::Tensor& outputs, const at::Tensor& targets) const override {
    const at::Tensor y = targets.reshape({targets.size(0), -1}).to(at::kFloat);
    const at::Tensor e = outputs.detach().reshape(y.sizes()).to(at::kFloat) - y;
    const at::Tensor squared = e.square();
    const at::Tensor totals = at::stack({e.abs().sum(), squared.sum()});
    if (pass == TaskPass::training) return totals;
    return at::cat({totals, y.sum(0), y.square().sum(0), squared.sum(0)});
  }

  std::vector<MetricValue> metric_values(TaskPass pass, const std::vector<double>& totals,
                                         double samples) const override {
    const double values = std::max(1.0, samples * double(outputs_));
    std::vector<MetricValue> out = {{"mae", totals[0] / values}, {"rmse", std::sqrt(totals[1] / values)}};
    if (pass == TaskPass::training) return out;
    double r2 = 0;
    for (std::int64_t d = 0; d < outputs_; ++d) {
      const double sum = totals[2 + d], square_sum = totals[2 + outputs_ + d], error_sum = totals[2 + 2 * outputs_ + d];
      const double variance_sum = square_sum - sum * sum / std::max(1.0, samples);
      // A constant target: sklearn's convention, 1 for a perfect fit and 0 otherwise.
      r2 += variance_sum > 0 ? 1 - error_sum / variance_sum : (error_sum == 0 ? 1 : 0);
    }
    out.push_back({"r2", r2 / double(outputs_)});
    return out;
  }

 private:
  RegressionLoss loss_;
  double delta_;
  std::int64_t outputs_ = 1;  // values per sample
};

}  // namespace

TaskDefinition regression_task() {
  TaskDefinition spec;
  spec.name = "regression";
  spec.description = "real values per sample: MSE, L1 or Huber loss; MAE, RMSE and R²";
  spec.target_kind = DatasetTargets::real;
  spec.options = {
      {"loss", OptionType::string, std::string("mse"), "mse, l1 or huber"},
      {"huber_delta", OptionType::real, 1.0, "where the huber loss turns from squared to linear"},
  };
  spec.rules = {OptionRule("loss").one_of({"mse", "l1", "huber"}), OptionRule("huber_delta").above(0)};
  spec.training_metrics = {{"mae", MetricGoal::minimize, "mean absolute error"},
                           {"rmse", MetricGoal::minimize, "root mean squared error"}};
  spec.evaluation_metrics = spec.training_metrics;
  spec.evaluation_metrics.push_back(
      {"r2", MetricGoal::maximize, "coefficient of determination, averaged over the outputs"});
  make_with<Regression>(spec);
  return spec;
}

}  // namespace plugtrain
