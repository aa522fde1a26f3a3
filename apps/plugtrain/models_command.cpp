#include <iostream>

#include "commands.h"
#include "config/toml_text.h"
#include "plugins/plugin_host.h"

namespace plugtrain::cli {


void add_models_command(CLI::App& app) {
  auto paths = std::make_shared<std::vector<std::filesystem::path>>();
  CLI::App* cmd = app.add_subcommand(
      "models", "List every model architecture the models plugins register, with its options");
  add_plugin_path_option(*cmd, *paths);
  cmd->callback([paths] {
    SearchOptions options;
    options.cli_paths = *paths;
    PluginHost host(options);
    if (host.models().all().empty()) {
      std::cout << "No models registered (is a models plugin on the plugin path? see `plugtrain plugins`).\n";
      return;
    }
    for (const auto& m : host.models().all()) {
      std::cout << m.spec.name << "  (" << m.plugin << ")  " << m.spec.description << "\n";
      for (const auto& o : m.spec.options)
        std::cout << "    " << o.name << " : " << to_string(o.type) << " = " << toml_text(o.default_value)
                  << "    " << o.doc << "\n";
    }
    for (const auto& s : host.models().shadowed()) std::cout << "note: " << s << "\n";
  });
}

}  // namespace plugtrain::cli
