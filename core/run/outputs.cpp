#include "run/outputs.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>

#include "logging/progress_bar.h"
#include "run/run_folder.h"
#include "util/atomic_file.h"
#include "util/error.h"

namespace plugtrain {

namespace {

void check_writable_folder(const std::filesystem::path& folder) {
  std::error_code ec;
  std::filesystem::create_directories(folder, ec);
  if (ec) throw Error(folder.string() + ": cannot create the checkpoint folder: " + ec.message());
  if (::access(folder.c_str(), W_OK) != 0)
    throw Error(folder.string() + ": the checkpoint folder is not writable: " + std::strerror(errno));
}

}  // namespace

std::unique_ptr<RunOutputs> prepare_outputs(const ValidatedRun& run, const RunPlan& plan, std::ostream& console) {
  const Experiment& e = run.experiment;
  auto out = std::make_unique<RunOutputs>();
  out->run_folder = run_folder_for(e, run.resume_from);
  if (plan.writes_outputs()) {
    // One run or resume at a time in a run folder; what a killed one left half-written goes.
    out->lock = std::make_unique<FolderLock>(out->run_folder, ".run.lock", "plugtrain run");
    remove_stale_temporaries(out->run_folder);
    write_file_atomically(out->run_folder / "experiment.toml", plan.record);
    out->log_file.open(out->run_folder / "train.log", std::ios::app);
    if (e.checkpoint.save != CheckpointSave::none) {
      out->checkpoints = checkpoint_folder(e, out->run_folder);
      check_writable_folder(out->checkpoints);  // now, not when the first epoch ends
      remove_stale_temporaries(out->checkpoints);
    }
    out->metrics_csv = out->run_folder / "metrics.csv";
    if (&console == &std::cout && ProgressBar::wanted()) out->terminal = &std::cout;
  }
  out->tee.set(plan.writes_outputs() ? console.rdbuf() : nullptr, out->log_file ? out->log_file.rdbuf() : nullptr);
  out->log << "run folder: " << out->run_folder.string() << "\n";
  return out;
}

}  // namespace plugtrain
