// Each subcommand registers itself on the CLI11 app and runs from its callback.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace plugtrain::cli {

void add_plugins_command(CLI::App& app);
void add_models_command(CLI::App& app);
void add_tasks_command(CLI::App& app);
void add_loggers_command(CLI::App& app);
void add_send_logs_command(CLI::App& app);
void add_run_command(CLI::App& app);
void add_export_command(CLI::App& app);
void add_sweep_command(CLI::App& app);
void add_report_command(CLI::App& app);
void add_bench_command(CLI::App& app);
void add_doctor_command(CLI::App& app);
void add_check_backend_command(CLI::App& app);
void add_data_command(CLI::App& app);
void add_evaluate_command(CLI::App& app);
void add_predict_command(CLI::App& app);
void add_generate_command(CLI::App& app);
void add_tokenize_command(CLI::App& app);

// Adds --plugin-path (repeatable) and --allow-insecure-plugins to a subcommand that loads plugins.
void add_plugin_path_option(CLI::App& command, std::vector<std::filesystem::path>& paths);

// This program's command line as main received it (ddp workers are started with it).
const std::vector<std::string>& command_line();
void set_command_line(int argc, char** argv);

// The exit code the subcommand that ran asked for.
int exit_code();
void set_exit_code(int code);

}  // namespace plugtrain::cli
