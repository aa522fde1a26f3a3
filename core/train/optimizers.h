// Building the optimizer and the learning-rate schedule an experiment names.
#pragma once

#include <memory>
#include <vector>

#include <torch/optim/optimizer.h>

#include "config/experiment.h"
#include "train/loop_config.h"

namespace plugtrain {

// `lr`: the run's base learning rate (optim.lr, scaled for the global batch by the plan). The
// optimizer is its algorithm's MultiTensor class (train/multi_tensor_optimizer.h) in the form
// optim.impl names (train/fused_optimizers.h: resolve_optimizer_impl says which "auto" is).
std::unique_ptr<torch::optim::Optimizer> make_optimizer(const Experiment& e, double lr,
                                                       const std::vector<at::Tensor>& params);

// Learning rate for optimizer step `step` (0-based), given the epoch length in steps:
// linear warm-up over warmup_steps (or warmup_epochs), then none / step / multistep / cosine /
// linear (per step); onecycle warms up by itself (pct_start). Steps are optimizer steps (with
// train.accumulate_steps, one per group of micro-batches).
// `position`: steps at the planned batch so far, fractional inside a batch that an
// out-of-memory halving split into several steps.
double scheduled_lr(const LoopConfig& c, double base_lr, double position, std::int64_t steps_per_epoch);

// optim.lr_scaling's factor for a batch k times the one optim.lr is meant for.
double lr_scaling_factor(LrScaling rule, double k);

void set_lr(torch::optim::Optimizer& optimizer, double lr);

}  // namespace plugtrain
