// `plugtrain tasks`: every task an experiment's [task] table can name, built in or from a plugin,
// with its options, its targets and the metrics it reports (task/task_registry.h).
#include <iostream>

#include "commands.h"
#include "config/toml_text.h"
#include "data/target_kinds.h"
#include "run/validate.h"
#include "task/task_registry.h"

namespace plugtrain::cli {

namespace {

void print_metrics(const char* pass, const std::vector<TaskMetric>& metrics) {
  for (const auto& m : metrics)
    std::cout << "    " << pass << "_" << m.name << " (" << word_of(direction_of(m.goal)) << ")    " << m.doc << "\n";
}

void list_tasks(const std::vector<std::filesystem::path>& paths) {
  SearchOptions search;
  search.cli_paths = paths;
  const PluginHost host(search);
  adopt_plugin_tasks(host);
  for (const TaskDefinition* task : all_tasks()) {
    const TaskDefinition& t = *task;
    std::cout << t.name << (t.plugin.empty() ? "" : "  (plugin " + t.plugin + ")") << "  " << t.description << "\n";
    std::cout << "  targets: " << data::describe(t.target_kind) << "\n";
    for (const auto& o : t.options)
      std::cout << "    " << o.name << " : " << to_string(o.type) << " = " << toml_text(o.default_value) << "    "
                << o.doc << "\n";
    std::cout << "  metrics (monitor names; train_loss and test_loss too):\n";
    print_metrics("train", t.training_metrics);
    print_metrics("test", t.evaluation_metrics);
  }
  for (const std::string& s : host.tasks().shadowed()) std::cout << "note: " << s << "\n";
  for (const RegisteredTask& t : host.tasks().all())
    if (const std::string& winner = find_task(t.spec.name)->plugin; winner != t.plugin)
      std::cout << "note: task '" << t.spec.name << "' from plugin '" << t.plugin << "' is shadowed by the "
                << (winner.empty() ? std::string("built-in task") : "plugin '" + winner + "'") << "\n";
  for (const std::string& f : host.load_failures("tasks")) std::cout << "note: " << f << "\n";
}

}  // namespace

void add_tasks_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "tasks", "List every task an experiment's [task] name can choose, with its options and the metrics it reports");
  auto paths = std::make_shared<std::vector<std::filesystem::path>>();
  add_plugin_path_option(*cmd, *paths);
  cmd->callback([paths] { list_tasks(*paths); });
}

}  // namespace plugtrain::cli
