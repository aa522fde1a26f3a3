#include "task/task_registry.h"

#include "task/builtin_tasks.h"
#include "config/config_error.h"
#include "data/target_kinds.h"

namespace plugtrain {

const std::vector<TaskSpec>& builtin_tasks() {
  static const std::vector<TaskSpec> tasks = {classification_task(), multilabel_task(), regression_task(),
                                              segmentation_task(), sequence_task()};
  return tasks;
}

const TaskSpec* find_task(const std::string& name) {
  for (const auto& t : builtin_tasks())
    if (t.name == name) return &t;
  return nullptr;
}

Options default_options(const TaskSpec& spec) {
  std::map<std::string, OptionValue> values;
  for (const auto& o : spec.options) values[o.name] = o.default_value;
  return Options(values);
}

std::unique_ptr<Task> make_task(const TaskSpec& spec, const Options& options, const TaskInputs& inputs,
                                TargetKind data_targets, const std::string& data_name) {
  if (data_targets != spec.target_kind)
    throw ConfigError("task.name: task '" + spec.name + "' learns " + data::describe(spec.target_kind) +
                      ", but data set '" + data_name + "' gives " + data::describe(data_targets) + " (choose a task for its targets)");
  return spec.factory(inputs, options);
}

}  // namespace plugtrain
