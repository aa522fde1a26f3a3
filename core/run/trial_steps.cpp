#include "run/trial_steps.h"

#include <sstream>
#include <utility>

#include "run/build.h"
#include "train/step_timer.h"

namespace plugtrain {

TrialSteps::TrialSteps(const ValidatedRun& run, RunPlan plan) : plan_(std::move(plan)) {
  std::ostringstream quiet;  // the build's lines belong to the run, not to its trials
  built_ = build_run(run, plan_, nullptr, nullptr, quiet);
}

TrialSteps::~TrialSteps() = default;

std::vector<double> TrialSteps::time(std::int64_t steps, std::int64_t batch, bool synchronise_each) {
  if (!timer_ || timer_batch_ != batch) {
    timer_.reset();  // its memory first: the batch search tries another batch next
    timer_ = built_->trainer->step_timer(batch);
    timer_batch_ = batch;
  }
  try {
    return timer_->time(steps, synchronise_each);
  } catch (...) {
    timer_.reset();  // out of memory mid-step, say: the next call starts afresh
    throw;
  }
}

std::int64_t TrialSteps::training_samples() const { return built_->data.train.size(); }

}  // namespace plugtrain
