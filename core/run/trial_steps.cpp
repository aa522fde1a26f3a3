#include "run/trial_steps.h"

#include <sstream>
#include <utility>

#include "run/build.h"

namespace plugtrain {

TrialSteps::TrialSteps(const ValidatedRun& run, RunPlan plan) : plan_(std::move(plan)) {
  std::ostringstream quiet;  // the build's lines belong to the run, not to its trials
  built_ = build_run(run, plan_, nullptr, nullptr, quiet);
}

TrialSteps::~TrialSteps() = default;

std::vector<double> TrialSteps::time(std::int64_t steps, std::int64_t batch, bool synchronise_each) {
  return built_->trainer->time_steps(steps, batch, synchronise_each);
}

std::int64_t TrialSteps::training_samples() const { return built_->data.train.size(); }

}  // namespace plugtrain
