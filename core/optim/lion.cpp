#include "optim/lion.h"

#include <ATen/ATen.h>

namespace plugtrain {

Lion::Lion(const std::vector<torch::Tensor>& params, LionOptions defaults)
    : torch::optim::Optimizer({torch::optim::OptimizerParamGroup(params)}, std::make_unique<LionOptions>(defaults)) {}

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

// state[0]: exp_avg.
void MultiTensorLion::build_state(GroupLists& l, const Options&, const OptimizerForm&) {
  l.state.resize(1);
  for (std::size_t i = 0; i < l.params.size(); ++i) {
    auto& slot = state_[l.keys[i]];
    if (!slot) {
      auto fresh = std::make_unique<LionParamState>();
      fresh->exp_avg(at::zeros_like(l.params[i], at::MemoryFormat::Preserve));
      slot = std::move(fresh);
    }
    l.state[0].push_back(static_cast<LionParamState&>(*slot).exp_avg());
  }
}

void MultiTensorLion::update(const ListOps& ops, GroupLists& l, const Options& options) {
  const auto& o = static_cast<const LionOptions&>(options);
  const double lr = o.lr();
  const auto [beta1, beta2] = o.betas();
  auto& exp_avg = l.state[0];
  if (o.weight_decay() != 0) ops.mul_(l.params, 1 - lr * o.weight_decay());
  std::vector<at::Tensor> update = ops.mul(exp_avg, beta1);
  ops.add_(update, l.grads, 1 - beta1);
  ops.sign_(update);
  ops.add_(l.params, update, -lr);
  ops.mul_(exp_avg, beta2);
  ops.add_(exp_avg, l.grads, 1 - beta2);
}

}  // namespace plugtrain
