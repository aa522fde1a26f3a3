// The stages `plugtrain run` calls, in order, as one value: run_experiment (run/run_experiment.h)
// composes them, and a test gives it stages of its own (recording, each calling the real one)
// to see that each is called once, in order, and hands the next what it made.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>

#include "distributed/world.h"
#include "run/build.h"
#include "run/outputs.h"
#include "run/plan.h"
#include "run/run_request.h"
#include "run/trials.h"
#include "run/validate.h"

namespace plugtrain {

class Collectives;

struct RunStages {
  // 1 validate (run/validate.h)
  std::function<ValidatedRun(const RunRequest&)> validate;
  // 2 trial steps (run/trials.h): "fastest" and data.batch_size = "auto"
  std::function<TrialResults(const ValidatedRun&, const SelectionLimits&, const std::optional<World>&)> trials;
  // 3 plan (run/plan.h), from the run and the trials' results
  std::function<RunPlan(const ValidatedRun&, const TrialResults&, const SelectionLimits&, const std::optional<World>&)>
      plan;
  // 4 the run folder and its log (run/outputs.h)
  std::function<std::unique_ptr<RunOutputs>(const ValidatedRun&, const RunPlan&, std::ostream&)> prepare_outputs;
  // 5 build (run/build.h)
  std::function<std::unique_ptr<BuiltRun>(const ValidatedRun&, const RunPlan&, Collectives*, const RunOutputs*,
                                          std::ostream&)>
      build;
  // 6 train: Trainer::fit()
  std::function<TrainSummary(BuiltRun&)> train;
  // 7 summarise (run/summary_writer.h): summary.json and the closing lines
  std::function<void(const Experiment&, RunResult&, std::int64_t, RunOutputs&)> summarise;
};

// The stages as `plugtrain run` has them.
RunStages run_stages();

}  // namespace plugtrain
