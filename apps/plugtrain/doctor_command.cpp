#include <iostream>

#include "commands.h"
#include "diagnose/doctor.h"
#include "util/error.h"

namespace plugtrain::cli {

void add_doctor_command(CLI::App& app) {
  struct Args {
    DoctorRequest request;
    std::filesystem::path experiment;
    bool json = false;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "doctor", "Check this machine: versions, system, plugins, and a smoke test on every usable backend");
  cmd->add_option("experiment", args->experiment, "Judge only the backend this experiment would choose");
  cmd->add_option("--set", args->request.overrides, "Override a key of the experiment (repeatable)");
  cmd->add_flag("--json", args->json, "Print the same as one JSON object");
  add_plugin_path_option(*cmd, args->request.plugin_paths);
  cmd->callback([args] {
    if (!args->experiment.empty()) args->request.experiment_file = args->experiment;
    const DoctorReport report = run_doctor(args->request);
    if (args->json)
      std::cout << doctor_json(report).dump(2) << "\n";
    else
      print_doctor(report, std::cout);
    set_exit_code(report.ok ? exit_ok : exit_failure);
  });
}

}  // namespace plugtrain::cli
