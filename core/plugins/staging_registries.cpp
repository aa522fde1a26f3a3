#include "plugins/staging_registries.h"

#include <set>

#include "config/option_rules.h"

namespace plugtrain {

namespace {

void refuse(Status& all_fit, std::string why) {
  if (all_fit) all_fit = WhyNot{std::move(why)};  // the first reason stands
}

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

}  // namespace

void StagingModels::add(ModelSpec spec, std::vector<OptionRule> rules) {
  if (Status fit = rules_fit(spec.options, rules); !fit) refuse(all_fit, "model '" + spec.name + "': " + fit.why_not());
  models.push_back({std::move(spec), "", std::move(rules), {}});
}

void StagingModels::declare_targets(const std::string& model, std::vector<DatasetTargets> targets) {
  for (RegisteredModel& m : models)
    if (m.spec.name == model) {
      m.targets = std::move(targets);
      return;
    }
  refuse(all_fit, "declare_targets names model '" + model + "', which it did not add before");
}

void StagingDatasets::add(DatasetSpec spec, std::vector<OptionRule> rules) {
  // Only a reader (3.7) is told the task's kind of target, so only it may make "as_task" targets;
  // another unknown kind is refused when a run uses it (as before 3.7: the plugin still loads).
  if (spec.targets == DatasetTargets::as_task)
    refuse(all_fit, "data set '" + spec.name + "': targets \"as_task\" need add_reader (SDK 3.7)");
  stage(std::move(spec), std::move(rules));
}

void StagingDatasets::stage(DatasetSpec spec, std::vector<OptionRule> rules) {
  if (Status fit = rules_fit(spec.options, rules); !fit) refuse(all_fit, "data set '" + spec.name + "': " + fit.why_not());
  datasets.push_back({std::move(spec), "", std::move(rules), {}, {}, {}});
}

void StagingDatasets::add_with_fields(DatasetSpec spec, std::vector<OptionRule> rules, DatasetFieldsFactory factory) {
  if (!factory) refuse(all_fit, "data set '" + spec.name + "': add_with_fields without a factory");
  add(std::move(spec), std::move(rules));
  datasets.back().fields_factory = std::move(factory);
}

void StagingDatasets::stage_reader(DatasetSpec spec, std::vector<OptionRule> rules, bool has_reader, DatasetPathCheck check) {
  if (!has_reader) refuse(all_fit, "data set '" + spec.name + "': add_reader or add_reader_with_validation without a reader");
  if (int(spec.targets) < 0 || int(spec.targets) > int(DatasetTargets::as_task))
    refuse(all_fit, "data set '" + spec.name + "': targets of kind " + std::to_string(int(spec.targets)) +
                        ", which this host does not know");
  stage(std::move(spec), std::move(rules));
  datasets.back().check = std::move(check);
}

void StagingDatasets::add_reader(DatasetSpec spec, std::vector<OptionRule> rules, DatasetReader reader,
                                 DatasetPathCheck check) {
  const bool has_reader = bool(reader);
  stage_reader(std::move(spec), std::move(rules), has_reader, std::move(check));
  datasets.back().reader = std::move(reader);
}

void StagingDatasets::add_reader_with_validation(DatasetSpec spec, std::vector<OptionRule> rules,
                                                 DatasetValidationReader reader, DatasetPathCheck check) {
  const bool has_reader = bool(reader);
  stage_reader(std::move(spec), std::move(rules), has_reader, std::move(check));
  datasets.back().validation_reader = std::move(reader);
}

void StagingTasks::add(TaskSpec spec, std::vector<OptionRule> rules) {
  const std::string what = "task '" + spec.name + "': ";
  if (Status fit = rules_fit(spec.options, rules); !fit) refuse(all_fit, what + fit.why_not());
  if (Status fit = check_metrics(spec.training_metrics, "training"); !fit) refuse(all_fit, what + fit.why_not());
  if (Status fit = check_metrics(spec.evaluation_metrics, "evaluation"); !fit) refuse(all_fit, what + fit.why_not());
  if (!spec.factory) refuse(all_fit, what + "it has no factory");
  for (const plugtrain::OptionSpec& o : spec.options)
    if (o.name == "name") refuse(all_fit, what + "option 'name' is [task]'s own key (the task's name)");
  if (int(spec.targets) < 0 || int(spec.targets) > int(DatasetTargets::sequence))
    refuse(all_fit, what + "it learns targets of kind " + std::to_string(int(spec.targets)) + ", which this host does not know");
  tasks.push_back({std::move(spec), "", std::move(rules)});
}

}  // namespace plugtrain
