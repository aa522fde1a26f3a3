// A tasks plugin that registers a task wrongly: its test metric is called "loss", the host's own
// column. The host must refuse the whole plugin with that reason.
#include "plugtrain/task.h"

namespace {

void register_tasks(plugtrain::TaskRegistry& registry) {
  plugtrain::TaskSpec spec;
  spec.name = "clashing";
  spec.description = "a task whose metric takes the loss's name";
  spec.training_metrics = {{"accuracy", plugtrain::MetricGoal::maximize, ""}};
  spec.evaluation_metrics = {{"loss", plugtrain::MetricGoal::minimize, ""}};
  spec.factory = [](const plugtrain::TaskData&, const plugtrain::Options&) -> std::unique_ptr<plugtrain::TaskFunctions> {
    return nullptr;
  };
  registry.add(spec, {});
}

}  // namespace

PLUGTRAIN_TASKS_PLUGIN(register_tasks, "broken_tasks", "0.1.0", "a wrongly registered task (test)")
