// `plugtrain loggers`: every logger an experiment's [logging] can switch on, with its options
// (SDK logger.h). `plugtrain send-logs RUN`: what a run's loggers kept because they could not
// send it while it ran (run/send_logs.h).
#include <iostream>

#include "commands.h"
#include "config/toml_text.h"
#include "plugins/plugin_host.h"
#include "run/send_logs.h"

namespace plugtrain::cli {

namespace {

void list_loggers(const std::vector<std::filesystem::path>& paths) {
  SearchOptions search;
  search.cli_paths = paths;
  const PluginHost host(search);
  for (const RegisteredLogger& l : host.loggers().all()) {
    std::cout << l.spec.name << "  (plugin " << l.plugin << ")  " << l.spec.description << "\n";
    std::cout << "  [logging." << l.spec.name << "]\n";
    for (const auto& o : l.spec.options)
      std::cout << "    " << o.name << " : " << to_string(o.type) << " = " << toml_text(o.default_value) << "    "
                << o.doc << "\n";
  }
  for (const std::string& s : host.loggers().shadowed()) std::cout << "note: " << s << "\n";
  for (const std::string& f : host.load_failures("loggers")) std::cout << "note: " << f << "\n";
}

}  // namespace

void add_loggers_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "loggers",
      "List every logger an experiment's [logging] can switch on (TensorBoard, MLflow, plugins'), with its options");
  auto paths = std::make_shared<std::vector<std::filesystem::path>>();
  add_plugin_path_option(*cmd, *paths);
  cmd->callback([paths] { list_loggers(*paths); });
}

void add_send_logs_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "send-logs",
      "Send what a run's loggers kept because they could not send it while it ran (an MLflow server that was down)");
  auto run = std::make_shared<std::filesystem::path>();
  cmd->add_option("run", *run, "the run folder (runs/<name>/version_N)")->required()->check(CLI::ExistingDirectory);
  auto paths = std::make_shared<std::vector<std::filesystem::path>>();
  add_plugin_path_option(*cmd, *paths);
  cmd->callback([run, paths] { send_kept_logs(*run, *paths, std::cout); });
}

}  // namespace plugtrain::cli
