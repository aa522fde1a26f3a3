#include "plugins/staging_registrar.h"

#include <set>

#include "config/option_rules.h"
#include "plugtrain/backend.h"
#include "plugtrain/model.h"
#include "plugtrain/task.h"

namespace plugtrain {

// One entry's options and rules, as its builder's OptionsBuilder receives them. (Not in the
// anonymous namespace: the builders below, members of StagingRegistrar, hold one.)
class OptionsInto final : public OptionsBuilder {
 public:
  OptionsInto(std::vector<OptionSpec>& specs, std::vector<OptionRule>& rules) : specs_(specs), rules_(rules) {}
  void option(const std::string& name, OptionType type, const OptionValue& default_value, const std::string& doc) override {
    specs_.push_back({name, type, default_value, doc});
  }
  void lower_bound(const std::string& option, double bound, bool exclusive) override {
    exclusive ? rule(option).above(bound) : rule(option).at_least(bound);
  }
  void upper_bound(const std::string& option, double bound, bool exclusive) override {
    exclusive ? rule(option).below(bound) : rule(option).at_most(bound);
  }
  void choices(const std::string& option, const std::vector<std::string>& allowed) override { rule(option).one_of(allowed); }
  void length(const std::string& option, std::size_t at_least_entries, std::size_t at_most_entries) override {
    rule(option).length(at_least_entries, at_most_entries);
  }

 private:
  // The rule of `option`: one per option, each call adding to it.
  OptionRule& rule(const std::string& option) {
    for (OptionRule& r : rules_)
      if (r.option == option) return r;
    return rules_.emplace_back(option);
  }
  std::vector<OptionSpec>& specs_;
  std::vector<OptionRule>& rules_;
};

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

}  // namespace

class StagingRegistrar::ModelEntry final : public ModelBuilder {
 public:
  explicit ModelEntry(const std::string& name) { entry.spec.name = name; }
  void description(const std::string& line) override { entry.spec.description = line; }
  OptionsBuilder& options() override { return options_; }
  void serves(const std::vector<DatasetTargets>& targets) override { entry.spec.serves = targets; }
  void factory(BatchModelFactory make) override { entry.spec.batch_factory = std::move(make); }
  Status fits() const {
    if (!entry.spec.batch_factory) return WhyNot{"it has no factory"};
    return rules_fit(entry.spec.options, entry.rules);
  }
  RegisteredModel entry;

 private:
  OptionsInto options_{entry.spec.options, entry.rules};
};

class StagingRegistrar::DatasetEntry final : public DatasetBuilder {
 public:
  explicit DatasetEntry(const std::string& name) { entry.spec.name = name; }
  void description(const std::string& line) override { entry.spec.description = line; }
  void targets(DatasetTargets kind) override { entry.spec.targets = kind; }
  OptionsBuilder& options() override { return options_; }
  void reader(DatasetReader read) override { entry.reader = std::move(read); }
  void path_check(DatasetPathCheck check) override { entry.spec.check = std::move(check); }
  void fields(const std::vector<std::string>& names) override { entry.spec.fields = names; }
  void validation_split(const std::string& name) override { entry.spec.validation_split = name; }
  void tokenizer_opener(TokenizerOpener open) override { entry.spec.tokenizer = std::move(open); }
  Status fits() const {
    if (!entry.reader) return WhyNot{"it has no reader"};
    if (!known(entry.spec.targets, /*as_task_too=*/true))
      return WhyNot{"targets of kind " + std::to_string(int(entry.spec.targets)) + ", which this host does not know"};
    for (const std::string& f : entry.spec.fields)
      if (f == "input" || f.empty()) return WhyNot{"field '" + f + "' is not a name of its own (\"input\" is the inputs')"};
    return rules_fit(entry.spec.options, entry.rules);
  }
  RegisteredDataset entry;

 private:
  OptionsInto options_{entry.spec.options, entry.rules};
};

class StagingRegistrar::TaskEntry final : public TaskBuilder {
 public:
  explicit TaskEntry(const std::string& name) { entry.spec.name = name; }
  void description(const std::string& line) override { entry.spec.description = line; }
  void targets(DatasetTargets kind) override { entry.spec.targets = kind; }
  OptionsBuilder& options() override { return options_; }
  void metric(TaskPass pass, const std::string& name, MetricGoal goal, const std::string& doc) override {
    (pass == TaskPass::training ? entry.spec.training_metrics : entry.spec.evaluation_metrics).push_back({name, goal, doc});
  }
  void loss_waits_for_host(const std::string& why) override { entry.spec.loss_waits_for_host = why; }
  void factory(TaskFactory make) override { entry.spec.factory = std::move(make); }
  Status fits() const {
    const TaskSpec& spec = entry.spec;
    if (Status fit = rules_fit(spec.options, entry.rules); !fit) return fit;
    if (Status fit = check_metrics(spec.training_metrics, "training"); !fit) return fit;
    if (Status fit = check_metrics(spec.evaluation_metrics, "evaluation"); !fit) return fit;
    if (!spec.factory) return WhyNot{"it has no factory"};
    for (const OptionSpec& o : spec.options)
      if (o.name == "name") return WhyNot{"option 'name' is [task]'s own key (the task's name)"};
    if (!known(spec.targets, /*as_task_too=*/false))
      return WhyNot{"it learns targets of kind " + std::to_string(int(spec.targets)) + ", which this host does not know"};
    return Status::fine();
  }
  RegisteredTask entry;

 private:
  OptionsInto options_{entry.spec.options, entry.rules};
};

class StagingRegistrar::LoggerEntry final : public LoggerBuilder {
 public:
  explicit LoggerEntry(const std::string& name) { entry.spec.name = name; }
  void description(const std::string& line) override { entry.spec.description = line; }
  OptionsBuilder& options() override { return options_; }
  void factory(LoggerFactory make) override { entry.spec.factory = std::move(make); }
  void takes_files(bool wanted) override { entry.spec.takes_files = wanted; }
  Status fits() const {
    const std::string& name = entry.spec.name;
    // The name is a TOML key of [logging] and a folder of the run: a plain word.
    if (name.empty() || name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") != std::string::npos)
      return WhyNot{"its name is not a word of lower-case letters, digits and _"};
    if (name == "loggers") return WhyNot{"'loggers' is [logging]'s own key"};
    if (!entry.spec.factory) return WhyNot{"it has no factory"};
    return rules_fit(entry.spec.options, entry.rules);
  }
  RegisteredLogger entry;

 private:
  OptionsInto options_{entry.spec.options, entry.rules};
};

StagingRegistrar::StagingRegistrar() = default;
StagingRegistrar::~StagingRegistrar() = default;

void StagingRegistrar::refuse(std::string why) {
  if (first_wrong_) first_wrong_ = WhyNot{std::move(why)};  // the first reason stands
}

void StagingRegistrar::add_backend(std::unique_ptr<Backend> added) {
  if (!added) return refuse("add_backend was given no backend");
  if (++backends_ > 1) return refuse("it adds a second backend (one plugin file has one backend)");
  backend = std::move(added);
}

ModelBuilder& StagingRegistrar::add_model(const std::string& name) { return *models_.emplace_back(std::make_unique<ModelEntry>(name)); }
DatasetBuilder& StagingRegistrar::add_dataset(const std::string& name) {
  return *datasets_.emplace_back(std::make_unique<DatasetEntry>(name));
}
TaskBuilder& StagingRegistrar::add_task(const std::string& name) { return *tasks_.emplace_back(std::make_unique<TaskEntry>(name)); }

LoggerBuilder& StagingRegistrar::add_logger(const std::string& name) {
  return *loggers_.emplace_back(std::make_unique<LoggerEntry>(name));
}

// This host offers no extension yet (docs/plugins.md, "How the SDK grows").
void* StagingRegistrar::host_extension(const char*, std::uint32_t) { return nullptr; }

Status StagingRegistrar::all_fit() const {
  if (!first_wrong_) return first_wrong_;
  for (const auto& m : models_)
    if (Status fit = m->fits(); !fit) return WhyNot{"model '" + m->entry.spec.name + "': " + fit.why_not()};
  for (const auto& d : datasets_)
    if (Status fit = d->fits(); !fit) return WhyNot{"data set '" + d->entry.spec.name + "': " + fit.why_not()};
  for (const auto& t : tasks_)
    if (Status fit = t->fits(); !fit) return WhyNot{"task '" + t->entry.spec.name + "': " + fit.why_not()};
  for (const auto& l : loggers_)
    if (Status fit = l->fits(); !fit) return WhyNot{"logger '" + l->entry.spec.name + "': " + fit.why_not()};
  return Status::fine();
}

std::uint32_t StagingRegistrar::kinds_given() const {
  return (backend ? PLUGTRAIN_KIND_BACKEND : 0u) | (models_.empty() ? 0u : PLUGTRAIN_KIND_MODELS) |
         (datasets_.empty() ? 0u : PLUGTRAIN_KIND_DATASETS) | (tasks_.empty() ? 0u : PLUGTRAIN_KIND_TASKS) |
         (loggers_.empty() ? 0u : PLUGTRAIN_KIND_LOGGERS);
}

std::vector<RegisteredModel> StagingRegistrar::models() const {
  std::vector<RegisteredModel> out;
  for (const auto& m : models_) out.push_back(m->entry);
  return out;
}

std::vector<RegisteredDataset> StagingRegistrar::datasets() const {
  std::vector<RegisteredDataset> out;
  for (const auto& d : datasets_) out.push_back(d->entry);
  return out;
}

std::vector<RegisteredTask> StagingRegistrar::tasks() const {
  std::vector<RegisteredTask> out;
  for (const auto& t : tasks_) out.push_back(t->entry);
  return out;
}

std::vector<RegisteredLogger> StagingRegistrar::loggers() const {
  std::vector<RegisteredLogger> out;
  for (const auto& l : loggers_) out.push_back(l->entry);
  return out;
}

}  // namespace plugtrain
