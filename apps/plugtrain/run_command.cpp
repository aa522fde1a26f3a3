#include <iostream>

#include "commands.h"
#include "run/run_experiment.h"
#include "util/error.h"

namespace plugtrain::cli {

void add_run_command(CLI::App& app) {
  auto request = std::make_shared<RunRequest>();
  CLI::App* cmd = app.add_subcommand("run", "Train the model an experiment file describes");
  cmd->add_option("experiment", request->experiment_file, "Experiment file (TOML); see docs/experiment.md")
      ->required();
  cmd->add_option("--set", request->overrides,
                  "Override a key, typed like a TOML value: --set optim.lr=0.01 --set model.hidden=[512,256] "
                  "(repeatable)");
  cmd->add_flag("--no-gpu,--no-cuda", request->host_cpu_only,
                "Use no GPU at all: only the host CPU's backend may be chosen");
  // --no-<backend> (--no-mps): the names come from the backends' plugins, which load after the
  // command line is read, so they arrive as extras and are checked against the backends then.
  cmd->allow_extras();
  cmd->footer("  --no-<backend>: never choose that backend, by the name `plugtrain plugins` lists (--no-mps)");
  auto resume = std::make_shared<std::string>();
  cmd->add_option("--resume", *resume,
                  "Continue exactly from a checkpoint: a .ckpt path, 'last' (this experiment's newest last.ckpt), "
                  "or 'auto' (last when there is one, else a fresh start: for restarts by torchrun or a scheduler)");
  cmd->add_flag("--profile", request->profile,
                "Record steps with LibTorch's profiler: <run folder>/profile/trace.json and the top operators");
  cmd->add_option("--profile-steps", request->profile_steps, "Steps the profiler records (default 20)")
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--no-cache", request->measure_again,
                "With [backend] select = \"fastest\": measure the backends again instead of using the cached choice");
  add_plugin_path_option(*cmd, request->plugin_paths);
  // Set by `plugtrain sweep` for each trial it starts: the file's [sweep] table is the sweep's.
  cmd->add_flag("--sweep-trial", request->sweep_trial)->group("");
  cmd->add_option("--stop-after-epoch", request->stop_after_epoch,
                  "Stop after this epoch with its checkpoint, exit 0; the schedule stays that of train.epochs, so "
                  "--resume last continues as if nothing had stopped (what a sweep's ASHA rungs use)")
      ->check(CLI::PositiveNumber);
  cmd->callback([cmd, request, resume] {
    request->resume = ResumeRequest::parse(*resume);
    for (const std::string& extra : cmd->remaining()) {
      if (extra.rfind("--no-", 0) != 0 || extra.size() == 5 || extra.find('=') != std::string::npos)
        throw CLI::ExtrasError({extra});
      request->disable_backends.push_back(extra.substr(5));
    }
    request->command_line = command_line();
    const RunResult result = run_experiment(*request, std::cout);
    set_exit_code(result.launched_workers     ? result.workers_exit_code
                  : result.summary.interrupted && !result.summary.paused ? exit_interrupted
                                               : exit_ok);
  });
}

}  // namespace plugtrain::cli
