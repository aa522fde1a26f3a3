// plugtrain SDK 5 — tasks from plugins: your own loss and metrics.
//
// A task decides what a model learns and how it is judged: the loss of the model's outputs
// against the targets, and metrics, each with the way it improves. A plugin registers tasks by
// name, each with an option schema (the experiment's [task] table, checked before any work like
// a model's options) and a factory; `[task] name = "<name>"` then trains with it, and its metrics
// go everywhere the built-in tasks' go: epoch lines, summary.json, metrics.csv, TensorBoard,
// checkpoint.monitor, early_stopping.monitor and sweep reports.
//
// Metrics are made of statistics: numbers summed over the batches of a pass (and, in a run of
// several processes, over the processes) from which the metrics follow at the end. A batch's
// statistics stay on the device (no read back to the host per step); accuracy is "correct, then
// correct / samples", an error rate "edits and lengths, then edits / length".
//
// TaskSpec and TaskMetric describe a task; Registrar::add_task registers it.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>  // the Tensor type alone: not all of ATen (torch/types.h) for every plugin file
#include <c10/core/Device.h>

#include "plugtrain/dataset.h"
#include "plugtrain/options.h"
#include "plugtrain/plugin.h"

namespace plugtrain {

// Which way a metric gets better: a monitor's "auto" mode, a sweep's ranking. Crosses as its integer.
enum class MetricGoal { maximize = 0, minimize = 1 };

struct TaskMetric {
  std::string name;  // "accuracy": the columns are train_<name> and test_<name>
  MetricGoal goal = MetricGoal::maximize;
  std::string doc;   // one line, for `plugtrain tasks`
};

// Training measures what is cheap enough to run on every step; evaluation (the test pass) everything.
enum class TaskPass { training = 0, evaluation = 1 };

// One run's task, made by the spec's factory. Every call may run on any device the run trains on;
// none may read a tensor back to the host except where the spec says so (loss_waits_for_host).
class TaskFunctions {
 public:
  virtual ~TaskFunctions() = default;

  // What the model must output per sample: the num_classes a model is built with (model.h).
  virtual std::int64_t model_outputs() const = 0;

  // The mean loss of a batch, a scalar that autograd can differentiate; `outputs` is what the
  // model returned for it ("output", and "output_lengths" where it gives them), `targets` the
  // batch's rows of the data set's targets.
  virtual at::Tensor loss(const TensorMap& outputs, const at::Tensor& targets) const = 0;

  // How many statistics a pass sums, and one batch's as a 1-D float tensor of that size on the
  // outputs' device (computed without autograd).
  virtual std::int64_t statistics_size(TaskPass pass) const = 0;
  virtual at::Tensor statistics(TaskPass pass, const TensorMap& outputs, const at::Tensor& targets) const = 0;

  // The pass's metrics from the statistics' totals over `samples` samples: one value per metric
  // of the spec's list for that pass, in its order.
  virtual std::vector<double> metric_values(TaskPass pass, const std::vector<double>& totals, double samples) const = 0;

  // Moves what the loss keeps (weights, say) to the training device, once, before the first step.
  virtual void to(c10::Device device) { (void)device; }
};

// Builds a run's task for its data's targets (dataset.h; its model_outputs() is 0 here: the
// task decides it); throws std::exception with one line naming the option ("task.gamma: ...")
// when an option does not fit the data.
using TaskFactory = std::function<std::unique_ptr<TaskFunctions>(const TargetDescription& data, const Options& options)>;

struct TaskSpec {
  std::string name;  // [task] name
  std::string description;
  DatasetTargets targets = DatasetTargets::class_index;  // the kind of target it learns (dataset.h)
  std::vector<OptionSpec> options;                       // the rest of the [task] table
  std::vector<TaskMetric> training_metrics, evaluation_metrics;  // the headline first; not empty
  // Why a training step with this loss cannot be recorded as a device graph (train.graphs),
  // because the loss reads something back to the host; empty when it can.
  std::string loss_waits_for_host;
  TaskFactory factory;
  std::vector<OptionRule> rules = {};  // what its option values may be (options.h)
};

}  // namespace plugtrain
