// A sweep's own run in its loggers (an MLflow parent run): started before the first trial, its
// state handed to every trial (each trial's loggers make it their parent: MLflow nests the
// trial's run under it), and the sweep's report (sweep.md, sweep.csv, sweep.svg) as its files
// at the end.
#pragma once

#include <iosfwd>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sweep/sweep_plan.h"
#include "train/callbacks/plugin_loggers.h"

namespace plugtrain {

class SweepLoggers {
 public:
  // Starts the loggers the sweep's experiment switches on; none: nothing happens.
  SweepLoggers(const SweepSetup& setup, std::ostream& log);
  // What each trial's process gets in its environment (kLoggerParentsVariable); empty: nothing.
  const std::vector<std::pair<std::string, std::string>>& trial_environment() const { return environment_; }
  // The report's files, then the end.
  void finish(RunEnd end);

 private:
  std::filesystem::path folder_;
  std::shared_ptr<PluginLoggers> loggers_;
  std::vector<std::pair<std::string, std::string>> environment_;
};

}  // namespace plugtrain
