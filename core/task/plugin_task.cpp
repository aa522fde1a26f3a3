#include "task/plugin_task.h"

#include <memory>

#include "data/model_description.h"
#include "data/target_kinds.h"
#include "task/builtin_tasks.h"
#include "util/error.h"
#include "util/format.h"

namespace plugtrain {

namespace {

class PluginTask : public SpecifiedTask {
 public:
  PluginTask(const TaskDefinition& definition, std::unique_ptr<TaskFunctions> functions)
      : SpecifiedTask(definition), plugin_(definition.plugin), functions_(std::move(functions)) {}

  std::int64_t model_outputs() const override { return functions_->model_outputs(); }

  // Not wrapped: an out-of-memory error must reach the loop's recovery as itself.
  at::Tensor loss(const at::Tensor& outputs, const at::Tensor& targets) const override {
    return functions_->loss(named(outputs, {}), targets);
  }
  at::Tensor loss(const at::Tensor& outputs, const at::Tensor& targets, const TensorMap& more) const override {
    return functions_->loss(named(outputs, more), targets);
  }

  std::int64_t statistics_size(TaskPass pass) const override { return functions_->statistics_size(pass); }
  bool statistics_recordable() const override { return false; }  // task.h: a plugin's may copy from the host

  at::Tensor statistics(TaskPass pass, const at::Tensor& outputs, const at::Tensor& targets) const override {
    return checked(pass, outputs, functions_->statistics(pass, named(outputs, {}), targets));
  }
  at::Tensor statistics(TaskPass pass, const at::Tensor& outputs, const at::Tensor& targets,
                        const TensorMap& more) const override {
    return checked(pass, outputs, functions_->statistics(pass, named(outputs, more), targets));
  }

  std::vector<MetricValue> metric_values(TaskPass pass, const std::vector<double>& totals,
                                         double samples) const override {
    const std::vector<double> values = functions_->metric_values(pass, totals, samples);
    const std::vector<TaskMetric>& specs = metrics(pass);
    if (values.size() != specs.size())
      throw Error(who() + "metric_values() gave " + std::to_string(values.size()) + " values for " +
                  std::to_string(specs.size()) + " metrics (one per metric of the pass, in its order)");
    std::vector<MetricValue> named;
    for (std::size_t i = 0; i < values.size(); ++i) named.push_back({specs[i].name, values[i]});
    return named;
  }

  void to(c10::Device device) override { functions_->to(device); }

 private:
  // A batch's statistics as the loop sums them: 1-D, statistics_size(pass) long, where the outputs are.
  at::Tensor checked(TaskPass pass, const at::Tensor& outputs, const at::Tensor& batch) const {
    const std::int64_t expected = statistics_size(pass);
    if (!batch.defined() || batch.dim() != 1 || batch.size(0) != expected)
      throw Error(who() + "statistics() gave " + (batch.defined() ? shape_text(batch.sizes()) : std::string("no tensor")) +
                  " for a pass whose statistics_size() is " + std::to_string(expected) + " (a 1-D tensor of that size)");
    if (batch.device() != outputs.device() || !at::isFloatingType(batch.scalar_type()))
      throw Error(who() + "statistics() gave a " + std::string(c10::toString(batch.scalar_type())) + " tensor on " +
                  batch.device().str() + " for outputs on " + outputs.device().str() + " (floats, on the outputs' device)");
    return batch;
  }

  // The model's outputs as the task reads them: "output" and the rest by name.
  static TensorMap named(const at::Tensor& output, const TensorMap& more) {
    TensorMap all(more.begin(), more.end());
    all["output"] = output;
    return all;
  }

  std::string who() const { return "task '" + name() + "' of plugin '" + plugin_ + "': "; }

  std::string plugin_;
  std::unique_ptr<TaskFunctions> functions_;
};

}  // namespace

TaskDefinition definition_from_plugin(const plugtrain::TaskSpec& spec, const std::string& plugin) {
  const std::optional<DatasetTargets> kind = data::target_kind_of(spec.targets);
  if (!kind)
    throw Error("task '" + spec.name + "' of plugin '" + plugin + "' learns targets of kind " +
                std::to_string(int(spec.targets)) + ", which this host does not know");
  TaskDefinition d;
  d.name = spec.name;
  d.description = spec.description;
  d.plugin = plugin;
  d.target_kind = *kind;
  d.options = spec.options;
  d.rules = spec.rules;
  d.training_metrics = spec.training_metrics;
  d.evaluation_metrics = spec.evaluation_metrics;
  d.loss_waits_for_host = spec.loss_waits_for_host;
  const TaskFactory factory = spec.factory;
  const TaskDefinition shell = d;  // what the task reports of itself (no factory: it would hold itself)
  const DatasetTargets shell_targets = spec.targets;
  d.factory = [shell, shell_targets, factory](const TaskInputs& inputs, const Options& options) -> std::unique_ptr<Task> {
    HostTargetDescription data;
    data.kind_ = shell_targets;
    data.classes_ = inputs.num_classes;
    data.shape_ = inputs.target_shape;
    data.class_names_ = inputs.class_names;
    std::unique_ptr<TaskFunctions> functions = factory(data, options);
    if (!functions) throw Error("task '" + shell.name + "' of plugin '" + shell.plugin + "': its factory made no task");
    return std::make_unique<PluginTask>(shell, std::move(functions));
  };
  return d;
}

}  // namespace plugtrain
