// A tasks plugin that registers a task wrongly: its test metric is called "loss", the host's own
// column. The host must refuse the whole plugin with that reason.
#include "plugtrain/task.h"

namespace {

void register_tasks(plugtrain::Registrar& host) {
  plugtrain::TaskSpec spec;
  spec.name = "clashing";
  spec.description = "a task whose metric takes the loss's name";
  spec.training_metrics = {{"accuracy", plugtrain::MetricGoal::maximize, ""}};
  spec.evaluation_metrics = {{"loss", plugtrain::MetricGoal::minimize, ""}};
  spec.factory = [](const plugtrain::TargetDescription&, const plugtrain::Options&) {
    return std::unique_ptr<plugtrain::TaskFunctions>();
  };
  host.add_task(spec);
}

}  // namespace

PLUGTRAIN_PLUGIN(register_tasks, PLUGTRAIN_KIND_TASKS, "broken_tasks", "0.1.0", "a wrongly registered task (test)")
