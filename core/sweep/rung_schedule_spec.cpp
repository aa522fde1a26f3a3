// [sweep] scheduler = "asha" | "hyperband" and its keys (sweep/rung_scheduler.h):
//
//   scheduler = "asha"
//   metric = "test_loss"        # default: checkpoint.monitor
//   mode = "min"                # default: checkpoint.mode, else by the metric
//   min_epochs = 1              # the first rung
//   max_epochs = 27             # default: train.epochs; every trial trains with this many
//   reduction_factor = 3        # η: 1/η of a rung's trials go on to the next
//   brackets = 3                # hyperband: how many brackets (default: all there are)
#include <cmath>

#include "config/config_error.h"
#include "config/toml_text.h"
#include "config/toml_values.h"
#include "run/recipe_checks.h"
#include "sweep/sweep_spec.h"
#include "task/task_registry.h"
#include "util/text.h"

namespace plugtrain {

namespace {

const char* const kSchedulerKeys[] = {"scheduler", "metric", "mode", "min_epochs", "max_epochs", "reduction_factor",
                                      "brackets"};

template <class E>
E word(const ExperimentFile& file, const toml::node& node, const std::string& key) {
  const std::optional<E> value = choice_named<E>(node.value_or(std::string()));
  if (!value) throw ConfigError(position(file, node) + ": sweep." + key + " must be one of " + join(choice_words<E>(), ", "));
  return *value;
}

std::int64_t integer(const ExperimentFile& file, const toml::node& node, const std::string& key, std::int64_t min) {
  if (!node.is_integer() || *node.value<std::int64_t>() < min)
    throw ConfigError(position(file, node) + ": sweep." + key + " must be an integer >= " + std::to_string(min));
  return *node.value<std::int64_t>();
}

}  // namespace

bool is_scheduler_key(const std::string& key) {
  for (const char* k : kSchedulerKeys)
    if (key == k) return true;
  return false;
}

void read_scheduler(const ExperimentFile& file, const toml::table& sweep, SchedulerRequest& out) {
  const toml::node* kind = sweep.get("scheduler");
  if (kind) {
    out.kind = word<SweepScheduler>(file, *kind, "scheduler");
    out.where = position(file, *kind);
  }
  for (const char* k : kSchedulerKeys)
    if (out.kind == SweepScheduler::none && std::string(k) != "scheduler" && sweep.contains(k))
      throw ConfigError(position(file, *sweep.get(k)) + ": sweep." + k +
                        " belongs to an early-stopping scheduler: add scheduler = \"asha\" or \"hyperband\"");
  if (const toml::node* n = sweep.get("metric")) {
    if (!n->is_string()) throw ConfigError(position(file, *n) + ": sweep.metric must be a string, got " + toml_text(*n));
    out.metric = n->value_or(std::string());
    out.metric_where = position(file, *n);
  }
  if (const toml::node* n = sweep.get("mode")) {
    if (n->value_or(std::string()) != word_or_auto(std::optional<Direction>())) out.mode = word<Direction>(file, *n, "mode");
  }
  if (const toml::node* n = sweep.get("min_epochs")) out.min_epochs = integer(file, *n, "min_epochs", 1);
  if (const toml::node* n = sweep.get("max_epochs")) out.max_epochs = integer(file, *n, "max_epochs", 1);
  if (const toml::node* n = sweep.get("reduction_factor")) {
    // η below 2 keeps every trial at every rung: nothing would ever stop early.
    if (!n->is_integer() || *n->value<std::int64_t>() < 2)
      throw ConfigError(position(file, *n) + ": sweep.reduction_factor (η) must be an integer >= 2, got " + toml_text(*n) +
                        " (1/η of each rung's trials go on)");
    out.reduction_factor = *n->value<std::int64_t>();
  }
  if (const toml::node* n = sweep.get("brackets")) {
    if (out.kind != SweepScheduler::hyperband)
      throw ConfigError(position(file, *n) + ": sweep.brackets belongs to scheduler = \"hyperband\" (asha is one bracket)");
    out.brackets = integer(file, *n, "brackets", 1);
  }
}

RungSchedule resolve_rung_schedule(const SchedulerRequest& request, const Experiment& base, const RegisteredDataset* dataset) {
  const bool has_val = has_validation_split(base, dataset);
  RungSchedule s;
  s.kind = request.kind;
  s.max_epochs = request.max_epochs.value_or(base.train.epochs);
  if (s.kind == SweepScheduler::none) return s;
  s.min_epochs = request.min_epochs;
  s.reduction_factor = request.reduction_factor;
  const std::optional<Direction> mode = request.mode ? request.mode : request.metric ? std::nullopt : base.checkpoint.mode;
  const TaskDefinition* task = find_task(base.task.name);
  const std::optional<std::string> name = request.metric ? request.metric : base.checkpoint.monitor;
  const std::optional<Monitor> monitor =
      task ? find_monitor(task->training_metrics, task->evaluation_metrics, name, mode,
                          has_val ? "val" : "test")
           : std::nullopt;
  if (!monitor)
    throw ConfigError((request.metric ? request.metric_where : request.where) + ": sweep.metric '" + name.value_or("") +
                      "' is not a metric of task '" + base.task.name + "'; its metrics: " +
                      (task ? join(monitor_names(task->training_metrics, task->evaluation_metrics)) : std::string("none")));
  if (has_val && monitor->name.rfind("test_", 0) == 0)
    throw ConfigError((request.metric ? request.metric_where : request.where) + ": sweep.metric '" + monitor->name +
                      "' would rank the trials by the test set although " + validation_source(base, dataset) +
                      ": use 'val_" + monitor->name.substr(5) + "'");
  s.metric = monitor->name;
  s.maximise = monitor->direction == Direction::max;
  if (s.min_epochs >= s.max_epochs)
    throw ConfigError(request.where + ": sweep.min_epochs (" + std::to_string(s.min_epochs) +
                      ") must be below max_epochs (" + std::to_string(s.max_epochs) +
                      (request.max_epochs ? ")" : ", train.epochs)") + ": there would be no rung to stop a trial at");
  // Bracket b starts at rung b; the last possible one has no rung at all (plain full runs).
  const std::int64_t available = std::int64_t(s.milestones(0).size());
  s.brackets = s.kind == SweepScheduler::hyperband ? request.brackets.value_or(available) : 1;
  if (s.brackets > available)
    throw ConfigError(request.where + ": sweep.brackets = " + std::to_string(s.brackets) + " but min_epochs " +
                      std::to_string(s.min_epochs) + ", reduction_factor " + std::to_string(s.reduction_factor) +
                      " and max_epochs " + std::to_string(s.max_epochs) + " give " + std::to_string(available - 1) +
                      " rung(s), so at most " + std::to_string(available) + " brackets");
  return s;
}

}  // namespace plugtrain
