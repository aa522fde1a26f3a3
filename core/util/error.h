// The one error type of plugtrain: a message of one line for a person, and the exit code the
// command line gives for it. Each layer derives its own kind (ConfigError, PluginError,
// DataError, CheckpointError, DistributedError) only to name what went wrong; the CLI maps
// every one of them in one place (apps/plugtrain/main.cpp).
#pragma once

#include <stdexcept>
#include <string>

namespace plugtrain {

enum ExitCode : int {
  exit_ok = 0,
  exit_failure = 1,      // a run or command failed (data, plugin, checkpoint, distributed...)
  exit_bad_input = 2,    // the experiment or the command line is wrong; nothing was done
  exit_interrupted = 130 // stopped by SIGINT/SIGTERM after writing its checkpoint
};

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message, int exit_code = exit_failure)
      : std::runtime_error(message), exit_code_(exit_code) {}
  int exit_code() const { return exit_code_; }

 private:
  int exit_code_;
};

}  // namespace plugtrain
