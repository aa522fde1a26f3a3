// Building the optimizer an experiment names (its learning-rate schedule: train/lr_schedule.h).
#pragma once

#include <memory>
#include <vector>

#include <torch/optim/optimizer.h>

#include "config/experiment.h"

namespace plugtrain {

// `lr`: the run's base learning rate (optim.lr, scaled for the global batch by the plan). The
// optimizer is its algorithm's MultiTensor class (optim/multi_tensor_optimizer.h) in the form
// optim.impl names (optim/fused_optimizers.h: resolve_optimizer_impl says which "auto" is).
// `matrices[i]`: whether params[i] holds matrices, which optim.decay = "matrices" alone decays
// (empty: those of two or more dimensions; fsdp's flat shards say it for what they hold).
std::unique_ptr<torch::optim::Optimizer> make_optimizer(const Experiment& e, double lr,
                                                        const std::vector<at::Tensor>& params,
                                                        const std::vector<bool>& matrices = {});

// optim.lr_scaling's factor for a batch k times the one optim.lr is meant for.
double lr_scaling_factor(LrScaling rule, double k);

void set_lr(torch::optim::Optimizer& optimizer, double lr);

}  // namespace plugtrain
