// `plugtrain run`: the stages of a run, in order —
//   validate (run/validate.h)  the user's experiment, checked; never changed afterwards
//   plan     (run/plan.h)      backend, devices, strategy, batch, lr, loader: what the run decided
//   prepare_outputs (run/outputs.h)  run folder, experiment.toml, train.log
//   build    (run/build.h)     data, model, optimizer, strategy, precision, callbacks
//   train    (train/trainer.h) Trainer::fit()
//   summarise (run/summary_writer.h)  summary.json and the closing lines
// Each stage can be called on its own (a command that times a few steps plans and builds a
// run without creating a run folder).
#pragma once

#include <iosfwd>

#include "run/run_request.h"

namespace plugtrain {

// Throws ConfigError for a bad experiment (exit 2), another Error for anything else.
RunResult run_experiment(const RunRequest& request, std::ostream& console);

}  // namespace plugtrain
