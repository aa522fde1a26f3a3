#include "run/outputs.h"

#include <iostream>

#include "logging/progress_bar.h"
#include "run/run_folder.h"
#include "util/atomic_file.h"

namespace plugtrain {

std::unique_ptr<RunOutputs> prepare_outputs(const ValidatedRun& run, const RunPlan& plan, std::ostream& console) {
  const Experiment& e = run.experiment;
  auto out = std::make_unique<RunOutputs>();
  out->run_folder = run_folder_for(e, run.resume_from);
  if (plan.writes_outputs()) {
    std::filesystem::create_directories(out->run_folder);
    write_file_atomically(out->run_folder / "experiment.toml", plan.record);
    out->log_file.open(out->run_folder / "train.log", std::ios::app);
    if (e.checkpoint_save != "none") out->checkpoints = checkpoint_folder(e, out->run_folder);
    out->metrics_csv = out->run_folder / "metrics.csv";
    out->tensorboard = out->run_folder / "tensorboard";
    if (&console == &std::cout && ProgressBar::wanted()) out->terminal = &std::cout;
  }
  out->tee.set(plan.writes_outputs() ? console.rdbuf() : nullptr, out->log_file ? out->log_file.rdbuf() : nullptr);
  out->log << "run folder: " << out->run_folder.string() << "\n";
  return out;
}

}  // namespace plugtrain
