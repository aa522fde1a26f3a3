#include "config/config_error.h"
#include "config/suggest.h"
#include "data/from_experiment.h"
#include "data/plugin_dataset.h"
#include "data/target_kinds.h"
#include "run/recipe_checks.h"
#include "run/validate_jobs.h"
#include "util/text.h"

namespace plugtrain {

namespace {

// The data set gives the kind of target the task learns (as_task: synthetic data is made for
// whichever task the run has).
void check_dataset_serves_task(const ValidatedRun& v) {
  const std::optional<DatasetTargets> data_targets = data::target_kind_of(v.dataset->spec.targets);
  if (v.dataset->spec.targets == DatasetTargets::as_task || data_targets == v.task->target_kind) return;
  throw ConfigError(key_location(v.file, "task.name") + ": task '" + v.task->name + "' learns " +
                    data::describe(v.task->target_kind) + ", but data set '" + v.dataset->spec.name + "' gives " +
                    (data_targets ? data::describe(*data_targets) : "targets of an unknown kind") +
                    " (`plugtrain tasks` and `plugtrain data --list` say what each takes)");
}

// A model that declares the kinds of target it serves refuses a task of another kind.
void check_model_serves_task(const ExperimentFile& file, const RegisteredModel& model, const TaskDefinition& task) {
  if (model.spec.serves.empty()) return;
  std::vector<std::string> served;
  for (const DatasetTargets t : model.spec.serves) {
    const std::optional<DatasetTargets> kind = data::target_kind_of(t);
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

// The augmentations move pixels but not the targets: a task whose targets are per pixel (a
// mask) or in order across the image (a sequence) would learn from images its targets no longer
// describe.
void check_augmentation_keeps_targets(const ExperimentFile& file, const Experiment& e, const TaskDefinition& task) {
  if (task.target_kind != DatasetTargets::pixel_class && task.target_kind != DatasetTargets::sequence &&
      task.target_kind != DatasetTargets::next_token)
    return;
  for (const Augmentation a : e.data.augment.order) {
    const bool moves_pixels = a == Augmentation::random_crop || a == Augmentation::horizontal_flip ||
                              a == Augmentation::random_resized_crop || a == Augmentation::rotation ||
                              a == Augmentation::translate;
    if (moves_pixels)
      throw ConfigError(key_location(file, "data.augmentation") + ": " + word_of(a) +
                        " moves the pixels of the images "
                        "but not the targets of task '" +
                        task.name + "'; use color_jitter or random_erasing, or none");
  }
}

// data.label_noise changes class labels: only a task that has them.
void check_label_noise(const ExperimentFile& file, const Experiment& e, const TaskDefinition& task) {
  if (e.data.label_noise > 0 && task.target_kind != DatasetTargets::class_index)
    throw ConfigError(key_location(file, "data.label_noise") + ": data.label_noise changes class labels; task '" +
                      task.name + "' has no class labels to change");
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

}  // namespace

void check_parts_fit(const ValidatedRun& v) {
  check_dataset_serves_task(v);
  check_model_serves_task(v.file, *v.model, *v.task);
}

void cross_check_experiment(const ValidatedRun& v, const Experiment& e, const RunRequest& request) {
  check_monitor(v.file, *v.task, "checkpoint.monitor", e.checkpoint.monitor);
  check_monitor(v.file, *v.task, "early_stopping.monitor", e.early_stopping.monitor);
  check_augmentation_keeps_targets(v.file, e, *v.task);
  check_recipe(v.file, e, *v.task, v.dataset);
  check_label_noise(v.file, e, *v.task);
  if (!request.data_not_read) check_data_path(v.file, e, *v.dataset);
  check_normalization(v.file, e);
}

}  // namespace plugtrain
