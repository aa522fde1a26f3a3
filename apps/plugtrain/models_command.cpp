#include <iostream>
#include <sstream>

#include "commands.h"
#include "plugins/plugin_host.h"

namespace plugtrain::cli {

namespace {

std::string value_text(const OptionValue& v) {
  std::ostringstream out;
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, bool>) {
          out << (x ? "true" : "false");
        } else if constexpr (std::is_same_v<T, std::string>) {
          out << '"' << x << '"';
        } else if constexpr (std::is_same_v<T, std::vector<std::int64_t>> ||
                             std::is_same_v<T, std::vector<double>>) {
          out << "[";
          for (std::size_t i = 0; i < x.size(); ++i) out << (i ? ", " : "") << x[i];
          out << "]";
        } else {
          out << x;
        }
      },
      v);
  return out.str();
}

}  // namespace

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
        std::cout << "    " << o.name << " : " << to_string(o.type) << " = " << value_text(o.default_value)
                  << "    " << o.doc << "\n";
    }
    for (const auto& s : host.models().shadowed()) std::cout << "note: " << s << "\n";
  });
}

}  // namespace plugtrain::cli
