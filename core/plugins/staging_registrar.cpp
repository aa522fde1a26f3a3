#include "plugins/staging_registrar.h"

#include <set>

#include "config/option_rules.h"
#include "plugtrain/backend.h"
#include "plugtrain/logger.h"
#include "plugtrain/model.h"
#include "plugtrain/task.h"

namespace plugtrain {

namespace {

// A metric's name becomes the columns train_<name> and test_<name> and a monitor's name.
Status check_metrics(const std::vector<TaskMetric>& metrics, const char* pass) {
  if (metrics.empty()) return WhyNot{std::string("it has no ") + pass + " metrics (the first is the headline)"};
  std::set<std::string> seen;
  for (const TaskMetric& m : metrics) {
    const bool word = !m.name.empty() && m.name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") == std::string::npos;
    if (!word) return WhyNot{std::string(pass) + " metric '" + m.name + "' is not a name of lower-case letters, digits and _"};
    if (m.name == "loss") return WhyNot{std::string(pass) + " metric 'loss' is the host's own (every task reports its loss)"};
    if (!seen.insert(m.name).second) return WhyNot{std::string(pass) + " metric '" + m.name + "' is listed twice"};
    if (m.goal != MetricGoal::maximize && m.goal != MetricGoal::minimize)
      return WhyNot{std::string(pass) + " metric '" + m.name + "' has goal " + std::to_string(int(m.goal)) + ", not maximize or minimize"};
  }
  return Status::fine();
}

// A kind of target this host knows; as_task only where a data set may declare it.
bool known(DatasetTargets kind, bool as_task_too) {
  return (int(kind) >= 0 && int(kind) <= int(DatasetTargets::sequence)) || kind == DatasetTargets::next_token ||
         (as_task_too && kind == DatasetTargets::as_task);
}

Status model_fits(const ModelSpec& spec) {
  if (!spec.batch_factory && !spec.factory) return WhyNot{"it has no factory"};
  return rules_fit(spec.options, spec.rules);
}

Status dataset_fits(const DatasetSpec& spec) {
  if (!spec.read) return WhyNot{"it has no reader"};
  if (!known(spec.targets, /*as_task_too=*/true))
    return WhyNot{"targets of kind " + std::to_string(int(spec.targets)) + ", which this host does not know"};
  for (const std::string& f : spec.fields)
    if (f == "input" || f.empty())
      return WhyNot{"field '" + f + "' is not a name of its own (\"input\" is the inputs')"};
  return rules_fit(spec.options, spec.rules);
}

Status task_fits(const TaskSpec& spec) {
  if (Status fit = rules_fit(spec.options, spec.rules); !fit) return fit;
  if (Status fit = check_metrics(spec.training_metrics, "training"); !fit) return fit;
  if (Status fit = check_metrics(spec.evaluation_metrics, "evaluation"); !fit) return fit;
  if (!spec.factory) return WhyNot{"it has no factory"};
  for (const OptionSpec& o : spec.options)
    if (o.name == "name") return WhyNot{"option 'name' is [task]'s own key (the task's name)"};
  if (!known(spec.targets, /*as_task_too=*/false))
    return WhyNot{"it learns targets of kind " + std::to_string(int(spec.targets)) + ", which this host does not know"};
  return Status::fine();
}

Status logger_fits(const LoggerSpec& spec) {
  // The name is a TOML key of [logging] and a folder of the run: a plain word.
  if (spec.name.empty() || spec.name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") != std::string::npos)
    return WhyNot{"its name is not a word of lower-case letters, digits and _"};
  if (spec.name == "loggers") return WhyNot{"'loggers' is [logging]'s own key"};
  if (!spec.factory) return WhyNot{"it has no factory"};
  return rules_fit(spec.options, spec.rules);
}

// The first of `entries` that does not fit, as "<what> '<name>': why".
template <class Entry, class Fits>
Status first_unfit(const std::vector<Entry>& entries, const char* what, Fits fits) {
  for (const Entry& e : entries)
    if (Status fit = fits(e.spec); !fit) return WhyNot{std::string(what) + " '" + e.spec.name + "': " + fit.why_not()};
  return Status::fine();
}

}  // namespace

void StagingRegistrar::refuse(std::string why) {
  if (first_wrong_) first_wrong_ = WhyNot{std::move(why)};  // the first reason stands
}

void StagingRegistrar::add_backend(std::unique_ptr<Backend> added) {
  if (!added) return refuse("add_backend was given no backend");
  if (++backends_ > 1) return refuse("it adds a second backend (one plugin file has one backend)");
  backend = std::move(added);
}

// A model given by its ModelInputs factory (image models) is built by the same batch factory.
void StagingRegistrar::add_model(ModelSpec spec) {
  if (!spec.batch_factory && spec.factory)
    spec.batch_factory = [make = spec.factory](const BatchDescription& batch, const TargetDescription& target,
                                               const Options& options) {
      return make(model_inputs(batch, target), options);
    };
  models_.push_back({std::move(spec), {}});
}
void StagingRegistrar::add_dataset(DatasetSpec spec) { datasets_.push_back({std::move(spec), {}}); }
void StagingRegistrar::add_task(TaskSpec spec) { tasks_.push_back({std::move(spec), {}}); }
void StagingRegistrar::add_logger(LoggerSpec spec) { loggers_.push_back({std::move(spec), {}}); }

Status StagingRegistrar::all_fit() const {
  if (!first_wrong_) return first_wrong_;
  if (Status fit = first_unfit(models_, "model", model_fits); !fit) return fit;
  if (Status fit = first_unfit(datasets_, "data set", dataset_fits); !fit) return fit;
  if (Status fit = first_unfit(tasks_, "task", task_fits); !fit) return fit;
  return first_unfit(loggers_, "logger", logger_fits);
}

std::uint32_t StagingRegistrar::kinds_given() const {
  return (backend ? PLUGTRAIN_KIND_BACKEND : 0u) | (models_.empty() ? 0u : PLUGTRAIN_KIND_MODELS) |
         (datasets_.empty() ? 0u : PLUGTRAIN_KIND_DATASETS) | (tasks_.empty() ? 0u : PLUGTRAIN_KIND_TASKS) |
         (loggers_.empty() ? 0u : PLUGTRAIN_KIND_LOGGERS);
}

}  // namespace plugtrain
