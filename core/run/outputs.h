// Stage 3 of a run: its folder (runs/<name>/version_N, or the one a resume continues), the
// resolved experiment.toml, train.log beside the console, and where the callbacks write.
// Only rank 0 writes; the other ranks get a log that goes nowhere.
#pragma once

#include <filesystem>
#include <fstream>
#include <iosfwd>
#include <memory>

#include "run/plan.h"
#include "run/validate.h"
#include "train/callbacks/plugin_loggers.h"
#include "util/folder_lock.h"
#include "util/tee_stream.h"

namespace plugtrain {

struct RunOutputs {
  std::filesystem::path run_folder;
  std::unique_ptr<FolderLock> lock;   // held while the run writes there (rank 0)
  std::filesystem::path checkpoints;  // empty: none (checkpoint.save = "none", or not rank 0)
  std::filesystem::path metrics_csv;  // empty: none
  std::ostream* terminal = nullptr;   // for a progress bar; null: none
  std::ofstream log_file;
  TeeBuffer tee{nullptr, nullptr};
  std::ostream log{&tee};  // the console and train.log
  // Last, so it goes first: a run that fails ends its loggers (finish) while `log` still exists.
  std::shared_ptr<PluginLoggers> loggers;  // null or empty: none (rank 0 only)

  bool writes() const { return !metrics_csv.empty(); }
};

std::unique_ptr<RunOutputs> prepare_outputs(const ValidatedRun& run, const RunPlan& plan, std::ostream& console);

}  // namespace plugtrain
