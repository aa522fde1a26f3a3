#include "train/step_timer.h"

#include <c10/core/impl/VirtualGuardImpl.h>

#include <algorithm>
#include <optional>
#include <utility>

#include "data/batch_loader.h"
#include "train/train_step.h"
#include "util/clock.h"

namespace plugtrain {

StepTimer::StepTimer(std::unique_ptr<data::BatchLoader> loader, std::unique_ptr<TrainStep> step, double lr,
                     c10::Device device)
    : loader_(std::move(loader)), step_(std::move(step)), lr_(lr), device_(device) {
  loader_->start_epoch(epoch_);
}

StepTimer::~StepTimer() = default;

void StepTimer::synchronise() const {
  if (!device_.is_cpu())
    c10::impl::VirtualGuardImpl(device_.type()).synchronizeDevice(device_.index() < 0 ? 0 : device_.index());
}

std::vector<double> StepTimer::time(std::int64_t steps, bool synchronise_each) {
  std::vector<double> seconds;
  const auto first = Clock::now();
  while (std::int64_t(seconds.size()) < steps) {
    const auto start = Clock::now();
    std::optional<data::Batch> batch = loader_->next();
    if (!batch) {  // a short data set: the next epoch
      loader_->start_epoch(++epoch_);
      continue;
    }
    step_->run(*batch, lr_);
    if (synchronise_each) synchronise();
    seconds.push_back(seconds_since(start));
  }
  if (!synchronise_each) {
    synchronise();
    seconds.assign(seconds.size(), seconds_since(first) / double(std::max<std::int64_t>(1, steps)));
  }
  return seconds;
}

}  // namespace plugtrain
