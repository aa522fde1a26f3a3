// `plugtrain tasks`: every task an experiment's [task] table can name, with its options and the
// metrics it reports (task/task_registry.h).
#include <iostream>

#include "commands.h"
#include "config/toml_text.h"
#include "task/task_registry.h"

namespace plugtrain::cli {

namespace {

void print_metrics(const char* pass, const std::vector<MetricSpec>& metrics) {
  for (const auto& m : metrics)
    std::cout << "    " << pass << "_" << m.name << " (" << word_of(m.direction) << ")    " << m.doc << "\n";
}

void list_tasks() {
  for (const TaskSpec& t : builtin_tasks()) {
    std::cout << t.name << "  " << t.description << "\n";
    for (const auto& o : t.options)
      std::cout << "    " << o.name << " : " << to_string(o.type) << " = " << toml_text(o.default_value) << "    "
                << o.doc << "\n";
    std::cout << "  metrics (monitor names; train_loss and test_loss too):\n";
    print_metrics("train", t.training_metrics);
    print_metrics("test", t.evaluation_metrics);
  }
}

}  // namespace

void add_tasks_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "tasks", "List every task an experiment's [task] name can choose, with its options and the metrics it reports");
  cmd->callback([] { list_tasks(); });
}

}  // namespace plugtrain::cli
