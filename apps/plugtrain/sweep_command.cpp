#include <iostream>

#include <nlohmann/json.hpp>

#include <boost/dll/runtime_symbol_info.hpp>

#include "commands.h"
#include "sweep/rung_report.h"
#include "sweep/sweep_report.h"
#include "sweep/sweep_runner.h"
#include "sweep/sweep_status.h"
#include "util/error.h"

namespace plugtrain::cli {

void add_sweep_command(CLI::App& app) {
  auto request = std::make_shared<SweepRequest>();
  CLI::App* cmd = app.add_subcommand(
      "sweep", "Train every trial of an experiment file's [sweep] table and report mean ± std per group");
  auto status = std::make_shared<std::filesystem::path>();
  CLI::Option* experiment =
      cmd->add_option("experiment", request->experiment_file, "Experiment file with a [sweep] table; see docs/sweeps.md");
  cmd->add_option("--status", *status,
                  "Show each trial's state in a sweep folder (runs/<name>/sweep): pending, running, finished, failed "
                  "with the reason, interrupted, stopped at a rung; reads squeue/sacct for a sweep on Slurm")
      ->excludes(experiment);
  auto json = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json, "With --status: print the same as one JSON object");
  cmd->add_option("--set", request->overrides, "Override a key for every trial (repeatable)");
  cmd->add_option("--jobs,-j", request->jobs,
                  "Trials at the same time (default: one per GPU, 1 on the CPU; on the CPU each gets its share of "
                  "the cores)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--dry-run", request->dry_run, "List the trials and their overrides; train none");
  cmd->add_flag("--no-gpu,--no-cuda", request->host_cpu_only, "Use no GPU at all");
  add_plugin_path_option(*cmd, request->plugin_paths);
  cmd->add_flag("--slurm", request->slurm,
                "Submit the trials to Slurm as one job array (each a `plugtrain run --resume auto`) and return; a "
                "follow-up job continues the sweep (promotions, the report) when they end");
  cmd->add_option("--partition", request->partition, "--slurm: the partition (sbatch --partition)");
  cmd->add_option("--time", request->time_limit, "--slurm: each trial's time limit (sbatch --time, e.g. 2:00:00)");
  cmd->add_option("--gpus-per-trial", request->gpus_per_trial, "--slurm: GPUs for each trial (sbatch --gpus-per-task)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--sbatch-arg", request->sbatch_args,
                  "--slurm: an option passed to sbatch as it is, e.g. --sbatch-arg=--account=proj (repeatable)")
      ->allow_extra_args(false);
  // Set on the follow-up job `--slurm` submits: a trial whose last attempt failed is not retried.
  cmd->add_flag("--continue", request->continuing)->group("");
  cmd->callback([request, status, json] {
    if (!status->empty()) {
      const SweepStatus found = read_sweep_status(*status);
      if (*json)
        std::cout << sweep_status_json(found).dump(2) << "\n";
      else
        print_sweep_status(found, std::cout);
      set_exit_code(found.any_failed() ? exit_failure : exit_ok);  // 1 when a trial failed
      return;
    }
    if (*json) throw CLI::ValidationError("--json goes with --status");
    if (request->experiment_file.empty())
      throw CLI::RequiredError("experiment (or --status DIR)");
    for (const bool slurm_only : {!request->partition.empty(), !request->time_limit.empty(),
                                  request->gpus_per_trial > 0, !request->sbatch_args.empty(), request->continuing})
      if (slurm_only && !request->slurm)
        throw CLI::ValidationError("--partition, --time, --gpus-per-trial, --sbatch-arg and --continue go with --slurm");
    if (request->slurm && request->jobs > 0)
      throw CLI::ValidationError("--jobs is for trials run here; with --slurm, Slurm decides how many run at once");
    std::error_code ec;
    request->executable = boost::dll::program_location(ec);
    if (ec || request->executable.empty()) request->executable = command_line().at(0);
    set_exit_code(run_sweep(*request, std::cout));
  });
}

void add_report_command(CLI::App& app) {
  auto folder = std::make_shared<std::filesystem::path>();
  CLI::App* cmd = app.add_subcommand(
      "report", "Rebuild the report of the runs below a folder (a sweep, half-finished or not, or plain runs)");
  cmd->add_option("folder", *folder, "e.g. runs/<name> or runs/<name>/sweep")->required();
  cmd->callback([folder] {
    write_report(build_report(*folder), *folder, std::cout);
    // A sweep with a rung scheduler: which trials went on at each rung, and the compute spent.
    for (const auto& sweep : {*folder, *folder / "sweep"})
      if (std::filesystem::exists(sweep / "trials.json")) {
        write_rung_report(sweep, std::cout);
        break;
      }
  });
}

}  // namespace plugtrain::cli
