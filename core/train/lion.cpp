#include "train/lion.h"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

namespace plugtrain {

Lion::Lion(const std::vector<torch::Tensor>& params, LionOptions defaults)
    : torch::optim::Optimizer({torch::optim::OptimizerParamGroup(params)},
                              std::make_unique<LionOptions>(defaults)) {}

void LionOptions::serialize(torch::serialize::OutputArchive& archive) const {
  _TORCH_OPTIM_SERIALIZE_TORCH_ARG(lr);
  _TORCH_OPTIM_SERIALIZE_TORCH_ARG(betas);
  _TORCH_OPTIM_SERIALIZE_TORCH_ARG(weight_decay);
}

void LionOptions::serialize(torch::serialize::InputArchive& archive) {
  _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(double, lr);
  _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(betas_t, betas);
  _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(double, weight_decay);
}

void LionParamState::serialize(torch::serialize::OutputArchive& archive) const {
  _TORCH_OPTIM_SERIALIZE_TORCH_ARG(exp_avg);
}

void LionParamState::serialize(torch::serialize::InputArchive& archive) {
  _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(torch::Tensor, exp_avg);
}

void Lion::save(torch::serialize::OutputArchive& archive) const {
  torch::optim::serialize<LionParamState, LionOptions>(archive, *this);
}

void Lion::load(torch::serialize::InputArchive& archive) {
  torch::optim::serialize<LionParamState, LionOptions>(archive, *this);
}

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
