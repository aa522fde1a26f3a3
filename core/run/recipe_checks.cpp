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

// fsdp's keys with fsdp, and what it cannot combine with yet.
void check_sharding(const ExperimentFile& file, const Experiment& e) {
  const bool fsdp = e.backend.strategy == RunStrategy::fsdp;
  if (e.distributed.shard && !fsdp)
    throw ConfigError(key_location(file, "distributed.shard") +
                      ": distributed.shard shards the model's state over "
                      "fsdp's processes, but backend.strategy is \"" +
                      word_or_auto(e.backend.strategy) +
                      "\"; set backend.strategy = \"fsdp\" or remove distributed.shard");
  for (const char* key : {"distributed.param_dtype", "distributed.reduce_dtype"})
    if (!fsdp && (std::string(key) == "distributed.param_dtype" ? e.distributed.param_dtype
                                                                : e.distributed.reduce_dtype) != ShardDtype::fp32)
      throw ConfigError(key_location(file, key) + ": " + key + " is fsdp's, but backend.strategy is \"" +
                        word_or_auto(e.backend.strategy) + "\"; set backend.strategy = \"fsdp\" or remove it");
  if (!fsdp) return;
  if (e.train.graphs == true)
    throw ConfigError(key_location(file, "train.graphs") +
                      ": fsdp gathers and releases parameters during the step, "
                      "which a recorded graph cannot hold; use train.graphs = \"auto\" or false");
  if (e.train.precision == PrecisionMode::fp16)
    throw ConfigError(key_location(file, "train.precision") +
                      ": fp16's loss scaling decides on each rank's own "
                      "gradients whether to skip a step, and fsdp's ranks hold different shards; use \"bf16\"");
  for (const char* key : {"train.ema_decay", "train.swa_start"})
    if ((std::string(key) == "train.ema_decay" ? e.train.ema_decay > 0 : e.train.swa_start > 0))
      throw ConfigError(key_location(file, key) + ": " + key +
                        " averages whole weights, which fsdp keeps only in "
                        "shards; use ddp for weight averaging");
}

}  // namespace

void check_recipe(const ExperimentFile& file, const Experiment& e, const TaskDefinition& task,
                  const RegisteredDataset* dataset) {
  check_monitor_split(file, e, dataset, "checkpoint.monitor", e.checkpoint.monitor);
  check_monitor_split(file, e, dataset, "early_stopping.monitor", e.early_stopping.monitor);
  check_sharding(file, e);
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
