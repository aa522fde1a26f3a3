#include <iostream>

#include <boost/dll/runtime_symbol_info.hpp>

#include "commands.h"
#include "sweep/sweep_report.h"
#include "sweep/sweep_runner.h"

namespace plugtrain::cli {

void add_sweep_command(CLI::App& app) {
  auto request = std::make_shared<SweepRequest>();
  CLI::App* cmd = app.add_subcommand(
      "sweep", "Train every trial of an experiment file's [sweep] table and report mean ± std per group");
  cmd->add_option("experiment", request->experiment_file, "Experiment file with a [sweep] table; see docs/sweeps.md")
      ->required();
  cmd->add_option("--set", request->overrides, "Override a key for every trial (repeatable)");
  cmd->add_option("--jobs,-j", request->jobs,
                  "Trials at the same time (default: one per GPU, 1 on the CPU; on the CPU each gets its share of "
                  "the cores)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--dry-run", request->dry_run, "List the trials and their overrides; train none");
  cmd->add_flag("--no-gpu,--no-cuda", request->host_cpu_only, "Use no GPU at all");
  add_plugin_path_option(*cmd, request->plugin_paths);
  cmd->callback([request] {
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
  cmd->callback([folder] { write_report(build_report(*folder), *folder, std::cout); });
}

}  // namespace plugtrain::cli
