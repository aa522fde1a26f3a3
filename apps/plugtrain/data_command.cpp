#include <iostream>

#include "commands.h"
#include "config/experiment_loader.h"
#include "data/from_experiment.h"
#include "describe/data_report.h"

namespace plugtrain::cli {

void add_data_command(CLI::App& app) {
  struct Args {
    std::filesystem::path experiment, grid;
    std::vector<std::string> overrides;
    int samples = 64, columns = 8;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "data", "Show what an experiment's [data] table resolves to: splits, classes, sample shape, normalisation, cache");
  cmd->add_option("experiment", args->experiment, "Experiment file (TOML)")->required();
  cmd->add_option("--set", args->overrides, "Override a key, e.g. --set data.augmentation='[\"rotation\"]'");
  cmd->add_option("--grid", args->grid, "Write a PNG grid of augmented training samples labelled with their class");
  cmd->add_option("--samples", args->samples, "Samples in the grid")->check(CLI::Range(1, 1024));
  cmd->add_option("--columns", args->columns, "Samples per row of the grid")->check(CLI::Range(1, 64));
  cmd->callback([args] {
    ExperimentFile file = parse_experiment_file(args->experiment);
    for (const auto& o : args->overrides) apply_override(file, o);
    const Experiment e = resolve_experiment(file);
    const data::LoadedData loaded = data::load_dataset(data::data_options(e));
    print_data_report(e, loaded, std::cout);
    if (!args->grid.empty()) {
      data::write_png_file(args->grid, augmented_sample_grid(e, loaded.data.train, args->samples, args->columns));
      std::cout << "grid: " << args->grid.string() << " (" << args->samples << " augmented training samples, epoch 0)\n";
    }
  });
}

}  // namespace plugtrain::cli
