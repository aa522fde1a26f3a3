#include <iostream>

#include "commands.h"
#include "config/config_error.h"
#include "config/toml_text.h"
#include "data/target_kinds.h"
#include "describe/data_report.h"
#include "run/build.h"
#include "util/text.h"

namespace plugtrain::cli {

namespace {

const char* targets_text(DatasetTargets targets) {
  if (targets == DatasetTargets::as_task) return "what the run's task learns";
  const auto kind = data::target_kind_of(targets);
  return kind ? data::describe(*kind) : "?";
}

void list_datasets(const std::vector<std::filesystem::path>& paths) {
  SearchOptions search;
  search.cli_paths = paths;
  const PluginHost host(search);
  for (const RegisteredDataset& d : host.datasets().all()) {
    std::cout << d.spec.name << "  (" << d.plugin << ")  " << d.spec.description << "; targets: "
              << targets_text(d.spec.targets) << (d.gives_validation_split() ? "; its own validation split" : "") << "\n";
    for (const auto& o : d.spec.options)
      std::cout << "    " << o.name << " : " << to_string(o.type) << " = " << toml_text(o.default_value) << "    " << o.doc
                << "\n";
  }
  for (const auto& s : host.datasets().shadowed()) std::cout << "note: " << s << "\n";
}

}  // namespace

void add_data_command(CLI::App& app) {
  struct Args {
    std::filesystem::path experiment, grid;
    std::vector<std::string> overrides;
    std::vector<std::filesystem::path> paths;
    bool list = false;
    int samples = 64, columns = 8;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "data", "Show what an experiment's [data] table resolves to: splits, classes, sample shape, normalisation, cache");
  cmd->add_option("experiment", args->experiment, "Experiment file (TOML)");
  cmd->add_flag("--list", args->list,
                "List every data set data.dataset can name: the bundled datasets plugin's and those other plugins register, "
                "with their targets and [dataset] options");
  add_plugin_path_option(*cmd, args->paths);
  cmd->add_option("--set", args->overrides, "Override a key, e.g. --set data.augmentation='[\"rotation\"]'");
  cmd->add_option("--grid", args->grid, "Write a PNG grid of augmented training samples labelled with their class");
  cmd->add_option("--samples", args->samples, "Samples in the grid")->check(CLI::Range(1, 1024));
  cmd->add_option("--columns", args->columns, "Samples per row of the grid")->check(CLI::Range(1, 64));
  cmd->callback([args] {
    if (args->list) return list_datasets(args->paths);
    if (args->experiment.empty()) throw ConfigError("data: give an experiment file, or --list");
    RunRequest request;
    request.experiment_file = args->experiment;
    request.overrides = args->overrides;
    request.plugin_paths = args->paths;
    request.sweep_trial = true;  // a sweep's file describes its data too; its [sweep] table is not read here
    const ValidatedRun run = validate(request);  // loads the plugins: data.dataset may be one of theirs
    const Experiment& e = run.experiment;
    const data::LoadedData loaded = data::load_dataset(run_data_options(run));
    print_data_report(e, loaded, std::cout);
    if (!args->grid.empty() && loaded.data.train.tokens())
      throw ConfigError("data --grid: data set '" + e.data.dataset_name + "' holds token ids, not images; there is no grid to draw");
    if (!args->grid.empty()) {
      data::write_png_file(args->grid, augmented_sample_grid(e, loaded.data.train, args->samples, args->columns));
      std::cout << "grid: " << args->grid.string() << " (" << args->samples << " augmented training samples, epoch 0)\n";
    }
  });
}

}  // namespace plugtrain::cli
