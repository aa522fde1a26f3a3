#include "train/optimizers.h"

#include <cmath>

#include "train/fused_optimizers.h"
#include "train/lion.h"
#include "train/multi_tensor_adam.h"
#include "train/multi_tensor_rmsprop.h"
#include "train/multi_tensor_sgd.h"
#include "util/error.h"

namespace plugtrain {

namespace {

std::tuple<double, double> betas_or(const Experiment& e, double b1, double b2) {
  if (e.optim.betas.size() == 2) return {e.optim.betas[0], e.optim.betas[1]};
  return {b1, b2};
}

// A second parameter group, like the first but without weight decay.
template <class Options>
void add_undecayed_group(torch::optim::Optimizer& optimizer, std::vector<at::Tensor> params) {
  auto options = std::make_unique<Options>(static_cast<const Options&>(optimizer.defaults()));
  options->weight_decay(0);
  optimizer.add_param_group(torch::optim::OptimizerParamGroup(std::move(params), std::move(options)));
}

std::unique_ptr<torch::optim::Optimizer> make_one_group(const Experiment& e, double lr, const std::vector<at::Tensor>& params,
                                                       OptimizerImpl impl);

}  // namespace

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const Experiment& e, double lr,
                                                       const std::vector<at::Tensor>& params) {
  const OptimizerImpl impl = resolve_optimizer_impl(e.optim.name, e.optim.impl, params);
  if (e.optim.decay == DecayScope::all || e.optim.weight_decay == 0) return make_one_group(e, lr, params, impl);
  // optim.decay = "matrices": group 0 decays the parameters of two or more dimensions, group 1
  // holds the rest (biases, norm scales) without decay: nanoGPT's configure_optimizers.
  std::vector<at::Tensor> decayed, kept;
  for (const at::Tensor& p : params) (p.dim() >= 2 ? decayed : kept).push_back(p);
  std::unique_ptr<torch::optim::Optimizer> optimizer = make_one_group(e, lr, decayed, impl);
  switch (e.optim.name) {
    case OptimizerName::sgd: add_undecayed_group<torch::optim::SGDOptions>(*optimizer, kept); break;
    case OptimizerName::adam: add_undecayed_group<torch::optim::AdamOptions>(*optimizer, kept); break;
    case OptimizerName::adamw: add_undecayed_group<torch::optim::AdamWOptions>(*optimizer, kept); break;
    case OptimizerName::rmsprop: add_undecayed_group<torch::optim::RMSpropOptions>(*optimizer, kept); break;
    case OptimizerName::lion: add_undecayed_group<LionOptions>(*optimizer, kept); break;
  }
  return optimizer;
}

namespace {

std::unique_ptr<torch::optim::Optimizer> make_one_group(const Experiment& e, double lr, const std::vector<at::Tensor>& params,
                                                       OptimizerImpl impl) {
  const double wd = e.optim.weight_decay;
  switch (e.optim.name) {
    case OptimizerName::sgd:
      return std::make_unique<MultiTensorSGD>(
          params, torch::optim::SGDOptions(lr).momentum(e.optim.momentum).nesterov(e.optim.nesterov).weight_decay(wd),
          impl);
    case OptimizerName::adam:
      return std::make_unique<MultiTensorAdam>(
          params, torch::optim::AdamOptions(lr).betas(betas_or(e, 0.9, 0.999)).eps(e.optim.eps).weight_decay(wd), impl);
    case OptimizerName::adamw:
      return std::make_unique<MultiTensorAdamW>(
          params, torch::optim::AdamWOptions(lr).betas(betas_or(e, 0.9, 0.999)).eps(e.optim.eps).weight_decay(wd), impl);
    case OptimizerName::rmsprop:
      return std::make_unique<MultiTensorRMSprop>(
          params,
          torch::optim::RMSpropOptions(lr).alpha(e.optim.alpha).eps(e.optim.eps).weight_decay(wd).momentum(e.optim.momentum),
          impl);
    case OptimizerName::lion:
      return std::make_unique<MultiTensorLion>(params, LionOptions(lr).betas(betas_or(e, 0.9, 0.99)).weight_decay(wd),
                                               impl);
  }
  throw Error(std::string("unknown optimizer '") + word_of(e.optim.name) + "'");
}

}  // namespace

namespace {

// PyTorch's OneCycleLR (anneal_strategy "cos", two phases): from lr / div_factor up to lr over
// the first pct_start of the steps, then down to that / final_div_factor.
double one_cycle_lr(const ScheduleConfig& s, double max_lr, double step, std::int64_t total) {
  const double initial = max_lr / s.div_factor, last = initial / s.final_div_factor;
  const double rise_end = s.pct_start * double(total) - 1, fall_end = double(total) - 1;
  auto anneal = [](double from, double to, double pct) { return to + (from - to) / 2 * (std::cos(M_PI * pct) + 1); };
  if (step <= rise_end) return anneal(initial, max_lr, rise_end > 0 ? step / rise_end : 1.0);
  return anneal(max_lr, last, std::min(1.0, (step - rise_end) / std::max(1e-12, fall_end - rise_end)));
}

}  // namespace

double scheduled_lr(const LoopConfig& c, double base_lr, double step, std::int64_t steps_per_epoch) {
  const ScheduleConfig& s = c.schedule;
  // SWA holds the learning rate at swa_lr from its first epoch on.
  if (c.swa_start > 0 && c.swa_lr > 0 && std::int64_t(step) / std::max<std::int64_t>(1, steps_per_epoch) + 1 >= c.swa_start)
    return c.swa_lr;
  std::int64_t total = c.epochs * steps_per_epoch;
  if (c.max_steps > 0) total = std::min(total, c.max_steps);
  if (s.name == ScheduleName::onecycle) return one_cycle_lr(s, base_lr, step, std::max<std::int64_t>(1, total));
  const std::int64_t warmup_steps = s.warmup_steps > 0 ? s.warmup_steps : s.warmup_epochs * steps_per_epoch;
  if (step < double(warmup_steps)) return base_lr * (step + 1) / double(warmup_steps);
  const std::int64_t epoch = std::int64_t(step) / std::max<std::int64_t>(1, steps_per_epoch);
  if (s.name == ScheduleName::step) return base_lr * std::pow(s.gamma, double(epoch / s.step_size));
  if (s.name == ScheduleName::multistep) {
    int passed = 0;
    for (auto m : s.milestones) passed += epoch >= m;
    return base_lr * std::pow(s.gamma, passed);
  }
  if (s.name == ScheduleName::cosine || s.name == ScheduleName::linear) {
    const double span = double(std::max<std::int64_t>(1, total - warmup_steps));
    const double t = std::min(1.0, (step - double(warmup_steps)) / span);
    const double shape = s.name == ScheduleName::cosine ? 0.5 * (1 + std::cos(M_PI * t)) : 1 - t;
    return s.min_lr + (base_lr - s.min_lr) * shape;
  }
  return base_lr;
}

double lr_scaling_factor(LrScaling rule, double k) {
  return rule == LrScaling::linear ? k : rule == LrScaling::sqrt ? std::sqrt(k) : 1.0;
}

void set_lr(torch::optim::Optimizer& optimizer, double lr) {
  for (auto& group : optimizer.param_groups()) group.options().set_lr(lr);
}

}  // namespace plugtrain
