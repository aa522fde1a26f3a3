// A task: what the model learns and how it is judged. It owns the loss, the metrics with their
// directions, how predictions come from the model's outputs and what a target is. The training
// loop and the evaluation ask the task and never know which one it is (DESIGN.md, "Tasks").
//
// Metrics are made of statistics summed over batches and, in a multi-process run, over the
// processes (counts, sums of errors, histograms, confusion matrices): the loop keeps one running
// sum on the device per pass, so no step waits for the device, and ddp combines them exactly.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include "config/choices.h"
#include "data/dataset.h"
#include "plugtrain/task.h"

namespace plugtrain {

// A metric is the SDK's TaskMetric (plugtrain/task.h: "accuracy", "cer", "miou"; the columns are
// train_<name> and test_<name>); its goal gives a monitor's "auto" mode.
inline Direction direction_of(MetricGoal goal) {
  return goal == MetricGoal::maximize ? Direction::max : Direction::min;
}

struct MetricValue {
  std::string name;
  double value = 0;
};

class Task {
 public:
  virtual ~Task() = default;

  virtual const std::string& name() const = 0;
  virtual DatasetTargets target_kind() const = 0;
  // What the model must output per sample: the `num_classes` a model is built for.
  virtual std::int64_t model_outputs() const = 0;

  // The mean loss of a batch; `outputs` is what the model returned for it.
  virtual at::Tensor loss(const at::Tensor& outputs, const at::Tensor& targets) const = 0;

  // The metrics of a pass, the headline metric first (evaluation's is the default monitor).
  virtual const std::vector<TaskMetric>& metrics(TaskPass pass) const = 0;
  // How many statistics a pass sums; a batch's, as one 1-D tensor of that size on the outputs'
  // device (no read back to the host); the metrics from their totals over `samples` samples.
  virtual std::int64_t statistics_size(TaskPass pass) const = 0;
  virtual at::Tensor statistics(TaskPass pass, const at::Tensor& outputs, const at::Tensor& targets) const = 0;
  virtual std::vector<MetricValue> metric_values(TaskPass pass, const std::vector<double>& totals,
                                                 double samples) const = 0;

  // The same with the model's other named outputs (Model::forward_batch), such as
  // "output_lengths": a task that reads them overrides these; by default they are not read.
  virtual at::Tensor loss(const at::Tensor& outputs, const at::Tensor& targets, const TensorMap& more) const {
    (void)more;
    return loss(outputs, targets);
  }
  virtual at::Tensor statistics(TaskPass pass, const at::Tensor& outputs, const at::Tensor& targets,
                                const TensorMap& more) const {
    (void)more;
    return statistics(pass, outputs, targets);
  }
  // An evaluation's figures per class ("accuracy/<class>", "iou/<class>"), for summary.json.
  virtual std::vector<MetricValue> per_class(const std::vector<double>& totals) const {
    (void)totals;
    return {};
  }

  // Whether a recorded step (train.graphs) may compute the training statistics inside its
  // recording, adding them to the running sums there: the built-in tasks' use device operations
  // alone. A plugin's are computed after the replay instead, so that one that copies from the
  // host (a stream sync, which a recording cannot hold) still trains with graphs.
  virtual bool statistics_recordable() const { return true; }

  // Moves what the loss keeps (class weights) to the training device, once, before the first step.
  virtual void to(c10::Device device) { (void)device; }

  // The headline metric: evaluation's first.
  const TaskMetric& headline() const { return metrics(TaskPass::evaluation).front(); }
};

// A metric that checkpoint.monitor or early_stopping.monitor watches, and which way is better.
struct Monitor {
  std::string name;  // "test_accuracy", "train_loss", "test_cer"
  Direction direction = Direction::max;
};

// Every name a monitor may take, given a task's metrics: train_loss, val_loss, test_loss, and
// train_<m> for each training metric, val_<m> / test_<m> for each evaluation metric.
std::vector<std::string> monitor_names(const std::vector<TaskMetric>& training,
                                       const std::vector<TaskMetric>& evaluation);

// The monitor `name` (nullopt: "auto", the headline on `split`, "val" or "test") in direction
// `mode` (nullopt: "auto", the metric's own; losses are minimised). Nullopt when the name is not
// one of them.
std::optional<Monitor> find_monitor(const std::vector<TaskMetric>& training, const std::vector<TaskMetric>& evaluation,
                                    const std::optional<std::string>& name, std::optional<Direction> mode,
                                    const std::string& split = "test");

}  // namespace plugtrain
