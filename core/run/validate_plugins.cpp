#include "config/config_error.h"
#include "config/dataset_keys.h"
#include "config/suggest.h"
#include "run/validate_jobs.h"
#include "task/plugin_task.h"
#include "util/text.h"

namespace plugtrain {

namespace {

const RegisteredModel& find_model(const PluginHost& host, const ExperimentFile& file, const Experiment& e) {
  if (const RegisteredModel* m = host.models().find(e.model.name)) return *m;
  std::vector<std::string> names;
  for (const auto& m : host.models().all()) names.push_back(m.spec.name);
  // A models plugin that failed to load may be the one that has it: say so.
  std::string failures;
  for (const std::string& f : host.load_failures("models")) failures += "; " + f;
  throw ConfigError(
      key_location(file, "model.name") + ": unknown model '" + e.model.name + "'" + did_you_mean(e.model.name, names) +
      "; available: " + join(names, ", ", "none (no models plugin loaded, see `plugtrain plugins`)") + failures);
}

const TaskDefinition& find_task_spec(const PluginHost& host, const ExperimentFile& file, const Experiment& e) {
  if (const TaskDefinition* t = find_task(e.task.name)) return *t;
  std::vector<std::string> names;
  for (const TaskDefinition* t : all_tasks()) names.push_back(t->name);
  std::string failures;
  for (const std::string& f : host.load_failures("tasks")) failures += "; " + f;
  throw ConfigError(key_location(file, "task.name") + ": unknown task '" + e.task.name + "'" +
                    did_you_mean(e.task.name, names) + "; available: " + join(names, ", ") + failures);
}

// data.dataset names a data set a loaded plugin registers: the bundled datasets plugin's
// (fashion-mnist, cifar10, image-folder, synthetic…) or another's.
const RegisteredDataset& find_dataset(const PluginHost& host, const ExperimentFile& file, const Experiment& e) {
  if (const RegisteredDataset* d = host.datasets().find(e.data.dataset_name)) return *d;
  std::vector<std::string> names;
  for (const auto& d : host.datasets().all()) names.push_back(d.spec.name);
  std::string failures;
  for (const std::string& f : host.load_failures("datasets")) failures += "; " + f;
  throw ConfigError(key_location(file, "data.dataset") + ": unknown data set '" + e.data.dataset_name + "'" +
                    did_you_mean(e.data.dataset_name, names) + "; available: " +
                    (names.empty() ? std::string("none (no datasets plugin was found)") : join(names, ", ")) +
                    failures);
}

}  // namespace

std::shared_ptr<PluginHost> start_plugin_host(const RunRequest& request, const Experiment& e) {
  SearchOptions search;
  search.cli_paths = request.plugin_paths;
  for (const auto& p : e.plugins.paths) search.experiment_paths.emplace_back(p);
  return std::make_shared<PluginHost>(search);
}

void look_up_model(ValidatedRun& v, Experiment& e) {
  v.model = &find_model(*v.host, v.file, e);
  e.model.options = resolve_model_options(v.file, v.model->spec, v.model->spec.rules);
}

void look_up_dataset(ValidatedRun& v, Experiment& e) {
  v.dataset = &find_dataset(*v.host, v.file, e);
  copy_data_keys_to_dataset(v.file, v.dataset->spec.name, v.dataset->plugin);
  e.data.dataset_options = resolve_table_options(v.file, "dataset", "data set '" + v.dataset->spec.name + "'",
                                                 v.dataset->spec.options, v.dataset->spec.rules, {});
  copy_dataset_options_to_data_keys(e, v.dataset->plugin);
}

void look_up_task(ValidatedRun& v, const Experiment& e) {
  adopt_plugin_tasks(*v.host);
  v.task = &find_task_spec(*v.host, v.file, e);
}

// After check_parts_fit: a task that does not fit the data says so before its options are read.
void resolve_task_options(const ValidatedRun& v, Experiment& e) {
  e.task.options =
      resolve_table_options(v.file, "task", "task '" + v.task->name + "'", v.task->options, v.task->rules, {"name"});
}

void adopt_plugin_tasks(const PluginHost& host) {
  // (The host refused a plugin whose task learns a kind of target it does not know.)
  for (const RegisteredTask& t : host.tasks().all()) add_plugin_task(definition_from_plugin(t.spec, t.plugin));
}

}  // namespace plugtrain
