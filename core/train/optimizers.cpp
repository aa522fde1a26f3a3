#include "train/optimizers.h"

#include <cmath>

#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/optim/rmsprop.h>
#include <torch/optim/sgd.h>

#include "train/fused_optimizers.h"
#include "train/lion.h"
#include "util/error.h"

namespace plugtrain {

namespace {

std::tuple<double, double> betas_or(const Experiment& e, double b1, double b2) {
  if (e.betas.size() == 2) return {e.betas[0], e.betas[1]};
  return {b1, b2};
}

}  // namespace

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const Experiment& e, double lr,
                                                       const std::vector<at::Tensor>& params) {
  const OptimizerImpl impl = resolve_optimizer_impl(e.optimizer, e.optimizer_impl, params);
  const bool loop = impl == OptimizerImpl::loop;
  if (e.optimizer == "sgd") {
    const auto o = torch::optim::SGDOptions(lr).momentum(e.momentum).nesterov(e.nesterov).weight_decay(e.weight_decay);
    if (loop) return std::make_unique<torch::optim::SGD>(params, o);
    return std::make_unique<MultiTensorSGD>(params, o, impl);
  }
  if (e.optimizer == "adam") {
    const auto o = torch::optim::AdamOptions(lr).betas(betas_or(e, 0.9, 0.999)).eps(e.eps).weight_decay(e.weight_decay);
    if (loop) return std::make_unique<torch::optim::Adam>(params, o);
    return std::make_unique<MultiTensorAdam>(params, o, impl);
  }
  if (e.optimizer == "adamw") {
    const auto o =
        torch::optim::AdamWOptions(lr).betas(betas_or(e, 0.9, 0.999)).eps(e.eps).weight_decay(e.weight_decay);
    if (loop) return std::make_unique<torch::optim::AdamW>(params, o);
    return std::make_unique<MultiTensorAdamW>(params, o, impl);
  }
  if (e.optimizer == "rmsprop") {
    const auto o =
        torch::optim::RMSpropOptions(lr).alpha(e.alpha).eps(e.eps).weight_decay(e.weight_decay).momentum(e.momentum);
    if (loop) return std::make_unique<torch::optim::RMSprop>(params, o);
    return std::make_unique<ForeachRMSprop>(params, o);
  }
  if (e.optimizer == "lion") {
    const auto o = LionOptions(lr).betas(betas_or(e, 0.9, 0.99)).weight_decay(e.weight_decay);
    if (loop) return std::make_unique<Lion>(params, o);
    return std::make_unique<ForeachLion>(params, o);
  }
  throw Error("unknown optimizer '" + e.optimizer + "'");
}

double scheduled_lr(const Experiment& e, double base_lr, double step, std::int64_t steps_per_epoch) {
  const std::int64_t warmup_steps = e.warmup_epochs * steps_per_epoch;
  if (step < double(warmup_steps)) return base_lr * (step + 1) / double(warmup_steps);
  const std::int64_t epoch = std::int64_t(step) / std::max<std::int64_t>(1, steps_per_epoch);
  if (e.schedule == "step") return base_lr * std::pow(e.gamma, double(epoch / e.step_size));
  if (e.schedule == "multistep") {
    int passed = 0;
    for (auto m : e.milestones) passed += epoch >= m;
    return base_lr * std::pow(e.gamma, passed);
  }
  if (e.schedule == "cosine") {
    std::int64_t total = e.epochs * steps_per_epoch;
    if (e.max_steps > 0) total = std::min(total, e.max_steps);
    const double span = double(std::max<std::int64_t>(1, total - warmup_steps));
    const double t = std::min(1.0, (step - double(warmup_steps)) / span);
    return e.min_lr + (base_lr - e.min_lr) * 0.5 * (1 + std::cos(M_PI * t));
  }
  return base_lr;
}

double lr_scaling_factor(const std::string& rule, double k) {
  return rule == "linear" ? k : rule == "sqrt" ? std::sqrt(k) : 1.0;
}

void set_lr(torch::optim::Optimizer& optimizer, double lr) {
  for (auto& group : optimizer.param_groups()) group.options().set_lr(lr);
}

}  // namespace plugtrain
