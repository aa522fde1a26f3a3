// `plugtrain models`: every registered architecture with its options; `plugtrain models NAME
// --input CxHxW`: that one's layer table and totals (core/describe/model_summary.h).
#include <iostream>

#include "commands.h"
#include "config/config_error.h"
#include "config/toml_text.h"
#include "plugins/plugin_host.h"
#include "describe/model_summary.h"

namespace plugtrain::cli {

namespace {

struct Args {
  std::vector<std::filesystem::path> paths;
  std::string name;
  std::string input;
  std::int64_t classes = 10;
  std::vector<std::string> sets;
  bool json = false;
};

void list_models(const PluginHost& host) {
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
}

void summarize(const PluginHost& host, const Args& args) {
  const RegisteredModel& model = find_registered_model(host, args.name);
  if (args.input.empty())
    throw ConfigError("models " + args.name + ": --input CxHxW is required for a summary (e.g. --input 3x32x32)");
  ModelInputs inputs{parse_input_shape(args.input), args.classes};
  if (args.classes < 1 || args.classes > 1000000)
    throw ConfigError("--classes " + std::to_string(args.classes) + ": expected a count from 1 to 1000000");
  const Options options = resolve_option_assignments(model, args.sets);
  const ModelSummary summary = summarize_model(model, inputs, options);
  if (args.json)
    std::cout << summary_json(summary).dump(2) << "\n";
  else
    std::cout << summary_text(summary);
}

}  // namespace

void add_models_command(CLI::App& app) {
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "models",
      "List every model architecture the models plugins register, with its options; with NAME, that model's "
      "layers, output shapes, parameters and multiply-adds");
  add_plugin_path_option(*cmd, args->paths);
  cmd->add_option("name", args->name, "A model to summarize (e.g. resnet18)");
  cmd->add_option("--input", args->input,
                  "With NAME: the per-sample input shape CxHxW (e.g. 3x32x32), or T tokens for a language model (e.g. 64; "
                  "--classes is then the vocabulary)");
  cmd->add_option("--classes", args->classes, "With NAME: the number of classes (default 10)");
  cmd->add_option("--set", args->sets,
                  "With NAME: a model option, option=value with a TOML value, as in the experiment's [model] "
                  "table (e.g. --set stem=\"cifar\"; repeatable)");
  cmd->add_flag("--json", args->json, "With NAME: print the summary as JSON");
  cmd->callback([args, cmd] {
    SearchOptions options;
    options.cli_paths = args->paths;
    PluginHost host(options);
    if (!args->name.empty()) return summarize(host, *args);
    for (const char* flag : {"--input", "--classes", "--set", "--json"})
      if (cmd->count(flag) > 0)
        throw ConfigError(std::string(flag) + " needs a model NAME (plugtrain models NAME --input CxHxW)");
    list_models(host);
  });
}

}  // namespace plugtrain::cli
