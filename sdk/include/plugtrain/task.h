// plugtrain SDK 3.6 — tasks from plugins: your own loss and metrics.
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
// A tasks plugin exports them with PLUGTRAIN_TASKS_PLUGIN; a models or data-sets plugin may add
// its own with PLUGTRAIN_TASKS beside its other export (the end of this file). TaskMetric,
// TaskData and TaskSpec cross the boundary by value: frozen since 3.6 (docs/plugins.md,
// "Versioning rules"); TaskFunctions' calls are only ever appended.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <boost/dll/alias.hpp>
#include <ATen/core/Tensor.h>  // the Tensor type alone: not all of ATen (torch/types.h) for every plugin file
#include <c10/core/Device.h>
#include <torch/version.h>

#include "plugtrain/abi.h"
#include "plugtrain/dataset.h"
#include "plugtrain/options.h"

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

// What the training data tells the task about its targets.
struct TaskData {
  std::int64_t num_classes = 0;            // classes (labels, for multi-hot targets; 0 for real values)
  std::vector<std::int64_t> target_shape;  // per sample: {} for a class, {K}, {D} or {H, W}
  std::vector<std::string> class_names;    // empty, or one per class
};

// A model's outputs beside "output", by name (the same type as model.h's TensorMap).
using TaskOutputs = std::map<std::string, at::Tensor>;

// One run's task, made by the spec's factory. Every call may run on any device the run trains on;
// none may read a tensor back to the host except where the spec says so (loss_waits_for_host).
class TaskFunctions {
 public:
  virtual ~TaskFunctions() = default;

  // What the model must output per sample: the num_classes a model is built with (model.h).
  virtual std::int64_t model_outputs() const = 0;

  // The mean loss of a batch, a scalar that autograd can differentiate; `outputs` is what the
  // model returned for it, `targets` the batch's rows of the data set's targets.
  virtual at::Tensor loss(const at::Tensor& outputs, const at::Tensor& targets) const = 0;

  // How many statistics a pass sums, and one batch's as a 1-D float tensor of that size on the
  // outputs' device (computed without autograd).
  virtual std::int64_t statistics_size(TaskPass pass) const = 0;
  virtual at::Tensor statistics(TaskPass pass, const at::Tensor& outputs, const at::Tensor& targets) const = 0;

  // The pass's metrics from the statistics' totals over `samples` samples: one value per metric
  // of the spec's list for that pass, in its order.
  virtual std::vector<double> metric_values(TaskPass pass, const std::vector<double>& totals, double samples) const = 0;

  // Moves what the loss keeps (weights, say) to the training device, once, before the first step.
  virtual void to(c10::Device device) { (void)device; }

  // The same as loss and statistics, with the model's other named outputs (model.h,
  // Model::forward_fields), such as "output_lengths"; by default they are not read.
  virtual at::Tensor loss(const at::Tensor& outputs, const at::Tensor& targets, const TaskOutputs& more) const {
    (void)more;
    return loss(outputs, targets);
  }
  virtual at::Tensor statistics(TaskPass pass, const at::Tensor& outputs, const at::Tensor& targets,
                                   const TaskOutputs& more) const {
    (void)more;
    return statistics(pass, outputs, targets);
  }
};

// Builds a run's task for its data; throws std::exception with one line naming the option
// ("task.gamma: ...") when an option does not fit the data.
using TaskFactory = std::function<std::unique_ptr<TaskFunctions>(const TaskData& data, const Options& options)>;

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
};

// Implemented by the host; a plugin's register function calls it.
class TaskRegistry {
 public:
  virtual ~TaskRegistry() = default;
  // Rules as for models (options.h); a rule naming no option, a task without metrics or an
  // option called "name" makes the plugin fail to load. A built-in task's name wins over a
  // plugin's (`plugtrain tasks` says so).
  virtual void add(TaskSpec spec, std::vector<OptionRule> rules) = 0;
};

}  // namespace plugtrain

// register_fn: void(plugtrain::TaskRegistry&). Use one of these once, at global scope:
// PLUGTRAIN_TASKS(register_fn) in a models or data-sets plugin, beside its own export;
// PLUGTRAIN_TASKS_PLUGIN(register_fn, "name", "1.0.0", "one line") for a tasks plugin.
#define PLUGTRAIN_TASKS(REGISTER_FN) BOOST_DLL_ALIAS(REGISTER_FN, plugtrain_register_tasks)
#define PLUGTRAIN_TASKS_PLUGIN(REGISTER_FN, NAME, VERSION, DESCRIPTION)    \
  PLUGTRAIN_PLUGIN_INFO(PLUGTRAIN_KIND_TASKS, NAME, VERSION, DESCRIPTION) \
  PLUGTRAIN_TASKS(REGISTER_FN)
