#include "run/validate.h"

#include "checkpoint/checkpoint.h"
#include "config/config_error.h"
#include "config/dataset_keys.h"
#include "config/suggest.h"
#include "data/from_experiment.h"
#include "data/plugin_dataset.h"
#include "data/target_kinds.h"
#include "run/recipe_checks.h"
#include "run/run_folder.h"
#include "task/plugin_task.h"
#include "util/stage_counts.h"
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
  throw ConfigError(key_location(file, "model.name") + ": unknown model '" + e.model.name + "'" + did_you_mean(e.model.name, names) +
                    "; available: " + join(names, ", ", "none (no models plugin loaded, see `plugtrain plugins`)") +
                    failures);
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

// A model that declares the kinds of target it serves refuses a task of another kind.
void check_model_serves_task(const ExperimentFile& file, const RegisteredModel& model, const TaskDefinition& task) {
  if (model.spec.serves.empty()) return;
  std::vector<std::string> served;
  for (const DatasetTargets t : model.spec.serves) {
    const std::optional<TargetKind> kind = data::target_kind_of(t);
    if (kind == task.target_kind) return;
    if (kind) served.push_back(data::describe(*kind));
  }
  throw ConfigError(key_location(file, "task.name") + ": model '" + model.spec.name + "' (plugin '" + model.plugin +
                    "') serves tasks on " + join(served, " or ") + "; task '" + task.name + "' learns " +
                    data::describe(task.target_kind) + " (`plugtrain tasks` lists the tasks and their targets)");
}

// checkpoint.monitor and early_stopping.monitor name one of the task's metrics.
void check_monitor(const ExperimentFile& file, const TaskDefinition& task, const std::string& key,
                   const std::optional<std::string>& monitor) {
  if (!monitor || find_monitor(task.training_metrics, task.evaluation_metrics, monitor, std::nullopt)) return;
  const std::vector<std::string> names = monitor_names(task.training_metrics, task.evaluation_metrics);
  throw ConfigError(key_location(file, key) + ": " + key + " '" + *monitor + "' is not a metric of task '" + task.name +
                    "'" + did_you_mean(*monitor, names) + "; its metrics: " + join(names, ", "));
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
                    (names.empty() ? std::string("none (no datasets plugin was found)") : join(names, ", ")) + failures);
}

// The augmentations move pixels but not the targets: a task whose targets are per pixel (a
// mask) or in order across the image (a sequence) would learn from images its targets no longer
// describe.
void check_augmentation_keeps_targets(const ExperimentFile& file, const Experiment& e, const TaskDefinition& task) {
  if (task.target_kind != TargetKind::pixel_class && task.target_kind != TargetKind::sequence &&
      task.target_kind != TargetKind::next_token)
    return;
  for (const Augmentation a : e.data.augment.order) {
    const bool moves_pixels = a == Augmentation::random_crop || a == Augmentation::horizontal_flip ||
                              a == Augmentation::random_resized_crop || a == Augmentation::rotation ||
                              a == Augmentation::translate;
    if (moves_pixels)
      throw ConfigError(key_location(file, "data.augmentation") + ": " + word_of(a) + " moves the pixels of the images "
                        "but not the targets of task '" + task.name + "'; use color_jitter or random_erasing, or none");
  }
}

// A data set says before any work whether data.path holds its data set.
void check_data_path(const ExperimentFile& file, const Experiment& e, const RegisteredDataset& dataset) {
  if (!dataset.spec.check) return;
  try {
    const data::DataOptions options = data::data_options(e);
    dataset.spec.check(data::PluginQuery(options), e.data.dataset_options);
  } catch (const std::exception& error) {
    throw ConfigError(key_location(file, "data.path") + ": " + first_line(error.what()));
  }
}

// data.mean and data.std come together, one value per channel, std > 0, and not with
// normalize = "none".
void check_normalization(const ExperimentFile& file, const Experiment& e) {
  if (e.data.mean.empty() && e.data.std.empty()) return;
  const std::string at = key_location(file, e.data.mean.empty() ? "data.std" : "data.mean");
  if (e.data.mean.size() != e.data.std.size())
    throw ConfigError(at + ": data.mean and data.std need the same number of values (one per channel), got " +
                      std::to_string(e.data.mean.size()) + " and " + std::to_string(e.data.std.size()));
  if (e.data.normalize == Normalize::none)
    throw ConfigError(at + ": data.mean and data.std are given but data.normalize is \"none\"");
  for (double s : e.data.std)
    if (!(s > 0)) throw ConfigError(key_location(file, "data.std") + ": every data.std value must be > 0");
}

// RunRequest::use_trained.
void keep_to_using_trained_weights(Experiment& e) {
  e.backend.devices = 1;
  e.backend.strategy = RunStrategy::single;
  e.backend.select = BackendSelect::priority;
  e.train.graphs = false;
  e.train.profile = false;
  e.data.on_device = false;
  e.model.init.clear();
}

}  // namespace

ValidatedRun validate(const RunRequest& request) {
  count_stage(Stage::validation);
  ValidatedRun v;
  v.file = request.experiment_text.empty() ? parse_experiment_file(request.experiment_file)
                                            : parse_experiment_text(request.experiment_text, request.experiment_file.string());
  if (v.file.table.contains("sweep") && !request.sweep_trial)
    throw ConfigError(key_location(v.file, "sweep") + ": this file has a [sweep] table: run it with `plugtrain sweep " +
                      v.file.source + "` (or remove the table to train one run)");
  for (const auto& o : request.overrides) apply_override(v.file, o);
  Experiment e = resolve_experiment(v.file);
  if (request.use_trained) keep_to_using_trained_weights(e);
  if (request.profile) e.train.profile = true;
  if (request.profile_steps > 0) e.train.profile_steps = request.profile_steps;

  SearchOptions search;
  search.cli_paths = request.plugin_paths;
  for (const auto& p : e.plugins.paths) search.experiment_paths.emplace_back(p);
  v.host = std::make_shared<PluginHost>(search);
  v.model = &find_model(*v.host, v.file, e);
  e.model.options = resolve_model_options(v.file, v.model->spec, v.model->rules);
  v.dataset = &find_dataset(*v.host, v.file, e);
  copy_data_keys_to_dataset(v.file, v.dataset->spec.name, v.dataset->plugin);
  e.data.dataset_options = resolve_table_options(v.file, "dataset", "data set '" + v.dataset->spec.name + "'",
                                                 v.dataset->spec.options, v.dataset->rules, {});
  copy_dataset_options_to_data_keys(e, v.dataset->plugin);
  adopt_plugin_tasks(*v.host);
  v.task = &find_task_spec(*v.host, v.file, e);
  // (as_task: synthetic data is made for whichever task the run has.)
  const std::optional<TargetKind> data_targets = data::target_kind_of(v.dataset->spec.targets);
  if (v.dataset->spec.targets != DatasetTargets::as_task && data_targets != v.task->target_kind)
    throw ConfigError(key_location(v.file, "task.name") + ": task '" + v.task->name + "' learns " +
                      data::describe(v.task->target_kind) + ", but data set '" + v.dataset->spec.name + "' gives " +
                      (data_targets ? data::describe(*data_targets) : "targets of an unknown kind") +
                      " (`plugtrain tasks` and `plugtrain data --list` say what each takes)");
  check_model_serves_task(v.file, *v.model, *v.task);
  e.task.options = resolve_table_options(v.file, "task", "task '" + v.task->name + "'", v.task->options, v.task->rules, {"name"});
  check_monitor(v.file, *v.task, "checkpoint.monitor", e.checkpoint.monitor);
  check_monitor(v.file, *v.task, "early_stopping.monitor", e.early_stopping.monitor);
  check_augmentation_keeps_targets(v.file, e, *v.task);
  check_recipe(v.file, e, *v.task, v.dataset);
  if (e.data.label_noise > 0 && v.task->target_kind != TargetKind::class_index)
    throw ConfigError(key_location(v.file, "data.label_noise") + ": data.label_noise changes class labels; task '" +
                      v.task->name + "' has no class labels to change");
  if (!request.data_not_read) check_data_path(v.file, e, *v.dataset);
  check_normalization(v.file, e);
  // A trained run used again (evaluate, predict) logs nothing: its loggers' plugins need not be here.
  if (!request.use_trained) v.loggers = resolve_loggers(v.file, e, *v.host);
  if (!e.model.init.empty() && !std::filesystem::is_regular_file(e.model.init))
    throw ConfigError(key_location(v.file, "model.init") + ": model.init '" + e.model.init + "' does not exist");
  if (!e.model.init.empty() && is_plugtrain_checkpoint(e.model.init))
    throw ConfigError(key_location(v.file, "model.init") + ": model.init '" + e.model.init +
                      "' is a plugtrain checkpoint, not a state_dict: continue it with --resume " + e.model.init +
                      ", or start from its weights after `plugtrain export " + e.model.init + " model.pt`");
  if (request.resume.requested()) {
    v.resume_from = resume_checkpoint(e, request.resume);
  }
  if (!v.resume_from.empty()) {
    const CheckpointContent info = read_checkpoint_info(v.resume_from);
    if (info.model_name != e.model.name)
      throw CheckpointError(v.resume_from.string() + ": written for model '" + info.model_name +
                            "', this experiment trains '" + e.model.name + "'");
    v.resume_record = info.experiment_json;
  }
  v.experiment = std::move(e);
  v.data = std::make_shared<RunData>(run_data_options(v), v.experiment);
  v.measure_again = request.measure_again;
  v.stop_after_epoch = request.stop_after_epoch;
  v.finished_checkpoint_is_done = request.resume.automatic();
  return v;
}

void adopt_plugin_tasks(const PluginHost& host) {
  // (The host refused a plugin whose task learns a kind of target it does not know.)
  for (const RegisteredTask& t : host.tasks().all()) add_plugin_task(definition_from_plugin(t.spec, t.rules, t.plugin));
}

}  // namespace plugtrain
