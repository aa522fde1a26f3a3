// `plugtrain check-backend NAME`: a backend plugin against the CPU, check by check
// (core/diagnose/conformance.h). Exit 0 when nothing failed, 1 when a check failed or the
// backend is not usable, 2 for a name no plugin has.
#include <iostream>

#include "commands.h"
#include "diagnose/conformance.h"
#include "util/error.h"

namespace plugtrain::cli {

void add_check_backend_command(CLI::App& app) {
  struct Args {
    ConformanceRequest request;
    bool json = false;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "check-backend",
      "Check a backend plugin against the CPU: its answers, round trips, operators, optimizer kernels, a "
      "training step of each model, checkpoints");
  cmd->add_option("name", args->request.backend, "The backend to check (see plugtrain plugins)")->required();
  cmd->add_flag("--json", args->json, "Print the same as one JSON object");
  cmd->add_flag("--all-models", args->request.all_models,
                "Also train the models over 50M parameters (wide_resnet50_2): slow on a CPU");
  cmd->add_option("--only", args->request.groups,
                  "Only these groups of checks: backend, transfer, op, optimizer, model, checkpoint")
      ->delimiter(',');
  add_plugin_path_option(*cmd, args->request.plugin_paths);
  cmd->callback([args] {
    const ConformanceReport report = check_backend(args->request);
    if (args->json)
      std::cout << conformance_json(report).dump(2) << "\n";
    else
      print_conformance(report, std::cout);
    set_exit_code(report.ok() ? exit_ok : exit_failure);
  });
}

}  // namespace plugtrain::cli
