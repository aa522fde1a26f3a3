// The tasks a run can name in [task]: each with its option schema (checked like a model's
// before anything is loaded), the metrics it reports and a factory. The built-in ones are
// classification (the default), multilabel, regression, segmentation and sequence; plugins add
// theirs (plugtrain/task.h, task/plugin_task.h).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "plugtrain/options.h"
#include "task/task.h"

namespace plugtrain {

// What the training data tells a task about its targets.
struct TaskInputs {
  std::int64_t num_classes = 0;            // classes (or labels, for multilabel) of the data set
  std::vector<std::int64_t> target_shape;  // per sample: {} for a class, {K}, {D} or {H, W}
  std::vector<std::string> class_names;    // empty, or one per class
};

struct TaskDefinition {
  std::string name;
  std::string description;
  std::string plugin;  // the plugin that registered it; empty for a built-in task
  DatasetTargets target_kind = DatasetTargets::class_index;
  std::vector<OptionSpec> options;
  std::vector<OptionRule> rules;
  std::vector<TaskMetric> training_metrics, evaluation_metrics;  // headline first
  // Why a step with this task's loss cannot be recorded as a device graph (train.graphs), when
  // the loss reads something back to the host; empty when it can.
  std::string loss_waits_for_host;
  // Throws Error naming task.<option> when an option does not fit the data (class weights).
  std::function<std::unique_ptr<Task>(const TaskInputs& inputs, const Options& options)> factory;
};

const std::vector<TaskDefinition>& builtin_tasks();

// Makes a plugin's task known to find_task and all_tasks for the rest of the process (plugins
// stay loaded until exit). A name already known keeps its first definition: the built-in
// tasks' names win, and so does the plugin found first on the search path.
void add_plugin_task(TaskDefinition definition);

// The built-in tasks, then those of plugins, in the order they were added.
std::vector<const TaskDefinition*> all_tasks();
const TaskDefinition* find_task(const std::string& name);

// Options of a task with every default filled in, for code that builds a run without a file.
Options default_options(const TaskDefinition& spec);

// The task an experiment names, built for its data set: "<where>: ..." when the data set's
// targets are not the task's kind.
std::unique_ptr<Task> make_task(const TaskDefinition& spec, const Options& options, const TaskInputs& inputs,
                                DatasetTargets data_targets, const std::string& data_name);

}  // namespace plugtrain
