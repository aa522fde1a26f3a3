#include "run/recipe_checks.h"

#include "config/config_error.h"

namespace plugtrain {

bool has_validation_split(const Experiment& e, const RegisteredDataset* dataset) {
  return e.data.val_fraction > 0 || (dataset && dataset->gives_validation_split());
}

std::string validation_source(const Experiment& e, const RegisteredDataset* dataset) {
  if (e.data.val_fraction > 0 || !dataset) return "data.val_fraction holds out a validation split";
  return "data set '" + dataset->spec.name + "' has its own validation split";
}

namespace {

// With a validation split the test set chooses nothing; without one there is no val_ metric.
void check_monitor_split(const ExperimentFile& file, const Experiment& e, const RegisteredDataset* dataset,
                         const std::string& key, const std::optional<std::string>& monitor) {
  if (!monitor) return;
  const bool has_val = has_validation_split(e, dataset);
  if (!has_val && monitor->rfind("val_", 0) == 0)
    throw ConfigError(key_location(file, key) + ": " + key + " '" + *monitor +
                      "' needs a validation split: set data.val_fraction (e.g. 0.1)");
  if (has_val && monitor->rfind("test_", 0) == 0)
    throw ConfigError(key_location(file, key) + ": " + key + " '" + *monitor + "' would select by the test set although " +
                      validation_source(e, dataset) + ": use '" + "val_" + monitor->substr(5) + "'");
}

}  // namespace

void check_recipe(const ExperimentFile& file, const Experiment& e, const TaskDefinition& task,
                  const RegisteredDataset* dataset) {
  check_monitor_split(file, e, dataset, "checkpoint.monitor", e.checkpoint.monitor);
  check_monitor_split(file, e, dataset, "early_stopping.monitor", e.early_stopping.monitor);
  if (e.train.test_every > 0 && !has_validation_split(e, dataset))
    throw ConfigError(key_location(file, "train.test_every") +
                      ": train.test_every needs a validation split (data.val_fraction, or a data set's own); without "
                      "one the test set is evaluated every train.eval_every epochs");
  for (const char* key : {"data.mixup_alpha", "data.cutmix_alpha"}) {
    const double alpha = std::string(key) == "data.mixup_alpha" ? e.data.mixup_alpha : e.data.cutmix_alpha;
    if (alpha > 0 && task.name != "classification")
      throw ConfigError(key_location(file, key) + ": " + key + " mixes class labels, which task '" + task.name +
                        "' does not learn (mixup and CutMix work with task 'classification')");
  }
  if (e.schedule.name == ScheduleName::onecycle && (e.schedule.warmup_epochs > 0 || e.schedule.warmup_steps > 0))
    throw ConfigError(key_location(file, e.schedule.warmup_steps > 0 ? "schedule.warmup_steps" : "schedule.warmup_epochs") +
                      ": schedule.name = \"onecycle\" warms up by itself (schedule.pct_start); remove the warm-up");
  if (e.train.swa_start > e.train.epochs)
    throw ConfigError(key_location(file, "train.swa_start") + ": train.swa_start " + std::to_string(e.train.swa_start) +
                      " is after the last epoch (train.epochs = " + std::to_string(e.train.epochs) + ")");
  if (e.train.swa_start > 0 && e.train.ema_decay > 0)
    throw ConfigError(key_location(file, "train.swa_start") +
                      ": train.swa_start and train.ema_decay both average the weights; choose one");
  if (e.train.swa_start > 0 && e.early_stopping.patience > 0)
    throw ConfigError(key_location(file, "train.swa_start") +
                      ": SWA averages up to the last epoch, which early stopping would not reach; remove "
                      "early_stopping.patience or train.swa_start");
  if (e.schedule.warmup_epochs > 0 && e.schedule.warmup_steps > 0)
    throw ConfigError(key_location(file, "schedule.warmup_steps") +
                      ": give schedule.warmup_steps or schedule.warmup_epochs, not both");
}

}  // namespace plugtrain
