#include "run/build_task.h"

#include "config/config_error.h"
#include "util/text.h"

namespace plugtrain {

namespace {

std::vector<std::string> names_of(const std::vector<TaskMetric>& metrics) {
  std::vector<std::string> names;
  for (const auto& m : metrics) names.push_back(m.name);
  return names;
}

}  // namespace

std::string targets_text(const data::Dataset& d) {
  switch (d.target_kind) {
    case DatasetTargets::class_index: return std::to_string(d.num_classes) + " classes";
    case DatasetTargets::multi_hot: return std::to_string(d.num_classes) + " labels per sample";
    case DatasetTargets::pixel_class: return std::to_string(d.num_classes) + " pixel classes";
    case DatasetTargets::sequence:
      return "sequences of up to " + std::to_string(d.labels.size(1)) + " of " + std::to_string(d.num_classes) + " classes";
    case DatasetTargets::next_token:
      return "the next token of " + std::to_string(d.labels.size(1)) + " positions, vocabulary " + std::to_string(d.num_classes);
    case DatasetTargets::real: {
      const std::int64_t values = d.labels.defined() && d.labels.dim() > 1 ? d.labels[0].numel() : 1;
      return std::to_string(values) + (values == 1 ? " value" : " values") + " per sample";
    }
  }
  return "";
}

std::shared_ptr<Task> build_task(const TaskDefinition& spec, const ValidatedRun& run, const data::Dataset& train,
                                 std::ostream& log) {
  const Experiment& e = run.experiment;
  TaskInputs inputs;
  inputs.num_classes = train.num_classes;
  for (std::int64_t d = 1; d < train.labels.dim(); ++d) inputs.target_shape.push_back(train.labels.size(d));
  inputs.class_names = train.class_names;
  // Defaults under what the experiment set (a run put together without validate() set none).
  std::map<std::string, OptionValue> values = default_options(spec).values();
  for (const auto& [name, value] : e.task.options.values()) values[name] = value;
  std::unique_ptr<Task> task;
  try {
    task = make_task(spec, Options(values), inputs, train.target_kind, e.data.dataset_name);
  } catch (const ConfigError& error) {
    if (error.key().empty()) throw;
    throw ConfigError(key_location(run.file, error.key()) + ": " + error.why());
  } catch (const std::exception& error) {
    if (spec.plugin.empty()) throw;
    // A plugin's factory says which option with "task.<option>: ..." (plugtrain/task.h).
    const std::string message = error.what();
    const std::size_t colon = message.find(": ");
    const bool names_key = message.rfind("task.", 0) == 0 && colon != std::string::npos;
    throw ConfigError((names_key ? key_location(run.file, message.substr(0, colon)) + message.substr(colon)
                                 : key_location(run.file, "task.name") + ": " + message) +
                      " (task '" + spec.name + "' of plugin '" + spec.plugin + "')");
  }
  log << "task: " << spec.name << ", metrics " << join(names_of(task->metrics(TaskPass::training))) << " (training), "
      << join(names_of(task->metrics(TaskPass::evaluation))) << " (test)\n";
  return task;
}

}  // namespace plugtrain
