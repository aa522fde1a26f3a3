#include <iostream>

#include "commands.h"
#include "describe/plugins_report.h"
#include "plugins/plugin_host.h"
#include "plugins/plugin_permissions.h"

namespace plugtrain::cli {

namespace {
int g_exit_code = 0;
std::vector<std::string> g_command_line;
}

const std::vector<std::string>& command_line() { return g_command_line; }
void set_command_line(int argc, char** argv) { g_command_line.assign(argv, argv + argc); }

int exit_code() { return g_exit_code; }
void set_exit_code(int code) { g_exit_code = code; }

void add_plugin_path_option(CLI::App& command, std::vector<std::filesystem::path>& paths) {
  command
      .add_option("--plugin-path", paths,
                  "Plugin file or folder searched before PLUGTRAIN_PLUGIN_PATH and the "
                  "folder beside the executable (repeatable)")
      ->check(CLI::ExistingPath);
  // Set while the command line is read, before the command's callback makes any PluginHost.
  command.add_flag_callback(
      "--allow-insecure-plugins",
      [] {
        allow_insecure_plugins([](const std::string& line) { std::cerr << "plugtrain: warning: " << line << "\n"; });
      },
      "Load a plugin that a user other than root and you could change (a group- or world-writable file or "
      "folder, or one owned by another user), with a warning, instead of refusing it");
}

void add_plugins_command(CLI::App& app) {
  struct Args {
    std::vector<std::filesystem::path> paths;
    bool json = false;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "plugins", "List the plugins found, in search order, and whether each is usable and why");
  add_plugin_path_option(*cmd, args->paths);
  cmd->add_flag("--json", args->json, "Print the same as JSON");
  cmd->callback([args] {
    SearchOptions options;
    options.cli_paths = args->paths;
    PluginHost host(options);
    if (args->json)
      std::cout << plugins_json(host).dump(2) << "\n";
    else
      std::cout << plugins_table(host);
    // Unusable or refused plugins are information, not failure.
    set_exit_code(0);
  });
}

}  // namespace plugtrain::cli
