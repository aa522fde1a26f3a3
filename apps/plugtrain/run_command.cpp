#include <iostream>

#include "commands.h"
#include "config/config_error.h"
#include "run/run_experiment.h"

namespace plugtrain::cli {

void add_run_command(CLI::App& app) {
  auto request = std::make_shared<RunRequest>();
  CLI::App* cmd = app.add_subcommand("run", "Train the model an experiment file describes");
  cmd->add_option("experiment", request->experiment_file, "Experiment file (TOML); see docs/experiment.md")
      ->required();
  cmd->add_option("--set", request->overrides,
                  "Override a key, typed like a TOML value: --set optim.lr=0.01 --set model.hidden=[512,256] "
                  "(repeatable)");
  cmd->add_flag("--no-cuda", request->no_cuda, "Use no GPU at all (disables cuda and mps)");
  cmd->add_flag("--no-mps", request->no_mps, "Do not use the Apple GPU (mps)");
  cmd->add_option("--resume", request->resume,
                  "Continue exactly from a checkpoint: a .ckpt path, or 'last' (this experiment's newest last.ckpt)");
  add_plugin_path_option(*cmd, request->plugin_paths);
  cmd->callback([request] {
    try {
      request->command_line = command_line();
      const RunResult result = run_experiment(*request, std::cout);
      set_exit_code(result.launched_workers ? result.workers_exit_code : result.summary.interrupted ? 130 : 0);
    } catch (const ConfigError& e) {
      std::cerr << "plugtrain: error: " << e.what() << "\n";
      set_exit_code(2);
    } catch (const std::exception& e) {
      std::cerr << "plugtrain: error: " << e.what() << "\n";
      set_exit_code(1);
    }
  });
}

}  // namespace plugtrain::cli
