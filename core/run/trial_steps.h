// A few training steps of the validated experiment on one device of one backend: what choosing
// the fastest backend, the batch-size search (data.batch_size = "auto") and `plugtrain bench`
// time. A trial takes the run as validation left it and its data as read once
// (run/run_data.h): it validates nothing again, starts no plugin host and reads no data set
// again. It builds a trainer without outputs (run/build.h); nothing is written.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "run/plan.h"
#include "run/validate.h"

namespace plugtrain {

struct BuiltRun;
class StepTimer;

class TrialSteps {
 public:
  // `plan`: trial_plan (run/plan.h).
  TrialSteps(const ValidatedRun& run, RunPlan plan);
  ~TrialSteps();

  // `steps` more steps of `batch` samples (0: the plan's batch), each one's seconds: ended by a
  // device synchronisation, or all the steps' mean after one at the end (StepTimer::time). Calls
  // with the same batch go on with the same loader and step, so timed steps after warm-up ones
  // are warm (a recorded step replays from its fifth step on); another batch gets new ones.
  std::vector<double> time(std::int64_t steps, std::int64_t batch = 0, bool synchronise_each = true);

  std::int64_t training_samples() const;
  const RunPlan& plan() const { return plan_; }
  BackendHandle& backend() const { return *plan_.choice.backend; }
  int device() const { return plan_.devices.devices.at(0); }

 private:
  RunPlan plan_;
  std::unique_ptr<BuiltRun> built_;
  std::unique_ptr<StepTimer> timer_;  // after built_: it goes first
  std::int64_t timer_batch_ = 0;
};

}  // namespace plugtrain
