// The built-in tasks' specs (task_registry.cpp lists them), one file each, and what they share.
#pragma once

#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "task/task_registry.h"

namespace plugtrain {

TaskDefinition classification_task();
TaskDefinition multilabel_task();
TaskDefinition regression_task();
TaskDefinition segmentation_task();
TaskDefinition sequence_task();
TaskDefinition language_model_task();

// A task whose metric lists and name come from its spec.
class SpecifiedTask : public Task {
 public:
  explicit SpecifiedTask(const TaskDefinition& spec)
      : name_(spec.name), kind_(spec.target_kind), training_(spec.training_metrics), evaluation_(spec.evaluation_metrics) {}
  const std::string& name() const override { return name_; }
  DatasetTargets target_kind() const override { return kind_; }
  const std::vector<TaskMetric>& metrics(TaskPass pass) const override {
    return pass == TaskPass::training ? training_ : evaluation_;
  }

 protected:
  // An Error naming the task when the model's outputs cannot be compared with the targets:
  // "task 'regression': the model outputs (32, 10) per batch, the targets are (32, 1)".
  void check_outputs(const at::Tensor& outputs, const at::Tensor& targets, bool same_shape) const;

 private:
  std::string name_;
  DatasetTargets kind_;
  std::vector<TaskMetric> training_, evaluation_;
};

// The per-class figures of `values` (one per class) named "<metric>/<class name or index>";
// classes whose value is negative (not measured: absent from the set) are left out.
std::vector<MetricValue> named_per_class(const std::string& metric, const std::vector<double>& values,
                                         const std::vector<std::string>& names);
// The mean of the values that are not negative (0 when none is).
double mean_of_measured(const std::vector<double>& values);

// spec.factory makes a T(spec, inputs, options).
template <class T>
void make_with(TaskDefinition& spec) {
  spec.factory = [spec](const TaskInputs& inputs, const Options& options) -> std::unique_ptr<Task> {
    return std::make_unique<T>(spec, inputs, options);
  };
}

}  // namespace plugtrain
