// `plugtrain run`: the stages of a run, in order (run/run_stages.h) —
//   validate (run/validate.h)  the user's experiment, checked; never changed afterwards
//   trials   (run/trials.h)    trial steps: the fastest backend, data.batch_size = "auto"
//   plan     (run/plan.h)      backend, devices, strategy, batch, lr, loader: what the run decided
//   prepare_outputs (run/outputs.h)  run folder, experiment.toml, train.log
//   build    (run/build.h)     data, model, optimizer, strategy, precision, callbacks
//   train    (train/trainer.h) Trainer::fit()
//   summarise (run/summary_writer.h)  summary.json and the closing lines
// Each stage can be called on its own (a command that times a few steps plans and builds a
// run without creating a run folder). None calls another: the trial steps build trainers of
// their own to time (run/trial_steps.h), the plan times and builds nothing.
#pragma once

#include <iosfwd>

#include "run/run_request.h"

namespace plugtrain {

struct RunStages;

// Throws ConfigError for a bad experiment (exit 2), another Error for anything else.
RunResult run_experiment(const RunRequest& request, std::ostream& console);
// The same with `stages` in place of run_stages() (a test's recording stages).
RunResult run_experiment(const RunStages& stages, const RunRequest& request, std::ostream& console);

}  // namespace plugtrain
