#include "task/task_registry.h"

#include <deque>
#include <mutex>

#include "task/builtin_tasks.h"
#include "config/config_error.h"
#include "data/target_kinds.h"

namespace plugtrain {

const std::vector<TaskDefinition>& builtin_tasks() {
  static const std::vector<TaskDefinition> tasks = {classification_task(), multilabel_task(), regression_task(),
                                              segmentation_task(), sequence_task(), language_model_task()};
  return tasks;
}

namespace {

// A deque: pointers into it stay valid as tasks are added.
struct PluginTasks {
  std::mutex mutex;
  std::deque<TaskDefinition> definitions;
};

PluginTasks& plugin_tasks() {
  static PluginTasks tasks;
  return tasks;
}

}  // namespace

void add_plugin_task(TaskDefinition definition) {
  for (const auto& t : builtin_tasks())
    if (t.name == definition.name) return;
  PluginTasks& tasks = plugin_tasks();
  const std::lock_guard<std::mutex> lock(tasks.mutex);
  for (const auto& t : tasks.definitions)
    if (t.name == definition.name) return;
  tasks.definitions.push_back(std::move(definition));
}

std::vector<const TaskDefinition*> all_tasks() {
  std::vector<const TaskDefinition*> all;
  for (const auto& t : builtin_tasks()) all.push_back(&t);
  PluginTasks& tasks = plugin_tasks();
  const std::lock_guard<std::mutex> lock(tasks.mutex);
  for (const auto& t : tasks.definitions) all.push_back(&t);
  return all;
}

const TaskDefinition* find_task(const std::string& name) {
  for (const TaskDefinition* t : all_tasks())
    if (t->name == name) return t;
  return nullptr;
}

Options default_options(const TaskDefinition& spec) {
  std::map<std::string, OptionValue> values;
  for (const auto& o : spec.options) values[o.name] = o.default_value;
  return Options(values);
}

std::unique_ptr<Task> make_task(const TaskDefinition& spec, const Options& options, const TaskInputs& inputs,
                                DatasetTargets data_targets, const std::string& data_name) {
  if (data_targets != spec.target_kind)
    throw ConfigError("task.name", "task '" + spec.name + "' learns " + data::describe(spec.target_kind) +
                      ", but data set '" + data_name + "' gives " + data::describe(data_targets) + " (choose a task for its targets)");
  return spec.factory(inputs, options);
}

}  // namespace plugtrain
