// `plugtrain run`: validate everything, choose the backend, load data, build the model,
// train, write the summary. All checks happen before any data is loaded or step taken.
#pragma once

#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

#include "train/trainer.h"

namespace plugtrain {

struct RunRequest {
  std::filesystem::path experiment_file;
  std::vector<std::string> overrides;  // "key.path=value"
  std::vector<std::filesystem::path> plugin_paths;
  bool no_cuda = false;  // no GPU at all
  bool no_mps = false;   // no Apple GPU
  std::string resume;    // "" (fresh run), "last", or a checkpoint path
  // This program's own command line: with devices = N, N copies of it are started as workers.
  std::vector<std::string> command_line;
};

struct RunResult {
  TrainSummary summary;
  std::string backend;
  std::string device;
  std::filesystem::path run_folder;
  std::filesystem::path summary_file;
  // This process only started and watched the worker processes (ddp on one machine).
  bool launched_workers = false;
  int workers_exit_code = 0;
  int world_size = 1;  // processes that trained together
};

// Throws ConfigError for a bad experiment, std::runtime_error for anything else.
RunResult run_experiment(const RunRequest& request, std::ostream& log);

}  // namespace plugtrain
