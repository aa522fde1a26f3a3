// Building the optimizer and the learning-rate schedule an experiment names.
#pragma once

#include <memory>
#include <vector>

#include <torch/optim/optimizer.h>

#include "config/experiment.h"

namespace plugtrain {

// `lr`: the run's base learning rate (optim.lr, scaled for the global batch by the plan).
std::unique_ptr<torch::optim::Optimizer> make_optimizer(const Experiment& e, double lr,
                                                       const std::vector<at::Tensor>& params);

// Learning rate for optimizer step `step` (0-based), given the epoch length in steps:
// linear warm-up over warmup_epochs, then none / step / multistep / cosine (per step).
double scheduled_lr(const Experiment& e, double base_lr, std::int64_t step, std::int64_t steps_per_epoch);

void set_lr(torch::optim::Optimizer& optimizer, double lr);

}  // namespace plugtrain
