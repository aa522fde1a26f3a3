#include "train/lion.h"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

namespace plugtrain {

Lion::Lion(const std::vector<torch::Tensor>& params, LionOptions defaults)
    : torch::optim::Optimizer({torch::optim::OptimizerParamGroup(params)},
                              std::make_unique<LionOptions>(defaults)) {}

torch::Tensor Lion::step(LossClosure closure) {
  at::NoGradGuard no_grad;
  torch::Tensor loss;
  if (closure) {
    at::AutoGradMode enable(true);
    loss = closure();
  }
  for (auto& group : param_groups_) {
    auto& options = static_cast<LionOptions&>(group.options());
    const double lr = options.lr();
    const auto [beta1, beta2] = options.betas();
    for (auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      const auto& grad = p.grad();
      auto key = p.unsafeGetTensorImpl();
      if (!state_.count(key)) {
        auto fresh = std::make_unique<LionParamState>();
        fresh->exp_avg(at::zeros_like(p, at::MemoryFormat::Preserve));
        state_[key] = std::move(fresh);
      }
      auto& exp_avg = static_cast<LionParamState&>(*state_[key]).exp_avg();
      if (options.weight_decay() != 0) p.mul_(1 - lr * options.weight_decay());
      auto update = exp_avg.mul(beta1).add_(grad, 1 - beta1).sign_();
      p.add_(update, -lr);
      exp_avg.mul_(beta2).add_(grad, 1 - beta2);
    }
  }
  return loss;
}

}  // namespace plugtrain
