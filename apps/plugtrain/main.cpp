// The plugtrain command line: each command is added by its own file of this folder (the
// add_*_command calls below, in the order --help lists them), then --version; errors become
// exit codes here, in one place.
#include <iostream>

#include <CLI/CLI.hpp>

#include "commands.h"
#include "plugtrain/abi.h"
#include "plugins/plugin_loader.h"
#include "util/error.h"
#include "util/fatal_signals.h"
#include "util/text.h"
#include "version.h"

int main(int argc, char** argv) {
  CLI::App app{"plugtrain: train LibTorch models from TOML experiments on the best device "
               "this machine really has (backends and models are run-time plugins)."};
  app.require_subcommand(0, 1);
  app.set_version_flag("--version",
                       std::string("plugtrain ") + PLUGTRAIN_VERSION + "\nLibTorch " +
                           plugtrain::host_torch_version() + "\nSDK ABI " +
                           std::to_string(PLUGTRAIN_SDK_ABI_MAJOR) + "." +
                           std::to_string(PLUGTRAIN_SDK_ABI_MINOR));

  plugtrain::report_fatal_signals();
  plugtrain::cli::set_command_line(argc, argv);
  plugtrain::cli::add_run_command(app);
  plugtrain::cli::add_export_command(app);
  plugtrain::cli::add_evaluate_command(app);
  plugtrain::cli::add_predict_command(app);
  plugtrain::cli::add_generate_command(app);
  plugtrain::cli::add_tokenize_command(app);
  plugtrain::cli::add_sweep_command(app);
  plugtrain::cli::add_report_command(app);
  plugtrain::cli::add_bench_command(app);
  plugtrain::cli::add_doctor_command(app);
  plugtrain::cli::add_check_backend_command(app);
  plugtrain::cli::add_data_command(app);
  plugtrain::cli::add_plugins_command(app);
  plugtrain::cli::add_models_command(app);
  plugtrain::cli::add_tasks_command(app);
  plugtrain::cli::add_loggers_command(app);
  plugtrain::cli::add_send_logs_command(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version print and succeed; anything else wrong on the command line is one
    // line and exit 2, like a wrong experiment (CLI11's own codes would be 100-ish).
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);
    std::cerr << "plugtrain: error: " << plugtrain::shortened(plugtrain::first_line(e.what())) << " (see --help)\n";
    return plugtrain::exit_bad_input;
  } catch (const plugtrain::Error& e) {  // every error of ours carries its exit code
    // One line: LibTorch's messages (which ours may quote) go on with a C++ stack trace.
    std::cerr << "plugtrain: error: " << plugtrain::shortened(plugtrain::first_line(e.what())) << "\n";
    return e.exit_code();
  } catch (const std::exception& e) {
    std::cerr << "plugtrain: error: " << plugtrain::shortened(plugtrain::first_line(e.what())) << "\n";
    return plugtrain::exit_failure;
  }
  if (app.get_subcommands().empty()) {
    std::cerr << "plugtrain: error: no command given (try: plugtrain plugins; see plugtrain --help)\n";
    return plugtrain::exit_bad_input;
  }
  return plugtrain::cli::exit_code();
}
