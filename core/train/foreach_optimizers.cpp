// RMSprop and Lion as foreach kernels (fused_optimizers.h): ATen has no fused kernel for them.
#include <algorithm>
#include <cmath>
#include <optional>

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include "train/fused_optimizers.h"

namespace plugtrain {

// RMSprop

ForeachRMSprop::ForeachRMSprop(std::vector<at::Tensor> params, torch::optim::RMSpropOptions options)
    : torch::optim::RMSprop(std::move(params), options) {}

void ForeachRMSprop::load(torch::serialize::InputArchive& archive) {
  torch::optim::RMSprop::load(archive);
  lists_.clear();
}

void ForeachRMSprop::build(std::size_t g, std::int64_t shape) {
  auto& group = param_groups_[g];
  const auto& o = static_cast<const torch::optim::RMSpropOptions&>(group.options());
  detail::GroupLists& l = lists_[g];
  l.reset(group.params(), shape, 3);
  for (std::size_t i = 0; i < l.params.size(); ++i) {
    const at::Tensor& p = l.params[i];
    auto& slot = state_[l.keys[i]];
    if (!slot) {
      auto fresh = std::make_unique<torch::optim::RMSpropParamState>();
      fresh->step(0);
      fresh->square_avg(at::zeros_like(p, at::MemoryFormat::Preserve));
      slot = std::move(fresh);
    }
    auto& s = static_cast<torch::optim::RMSpropParamState&>(*slot);
    if (o.momentum() > 0 && !s.momentum_buffer().defined())
      s.momentum_buffer(at::zeros_like(p, at::MemoryFormat::Preserve));
    if (o.centered() && !s.grad_avg().defined()) s.grad_avg(at::zeros_like(p, at::MemoryFormat::Preserve));
    l.state[0].push_back(s.square_avg());
    if (o.momentum() > 0) l.state[1].push_back(s.momentum_buffer());
    if (o.centered()) l.state[2].push_back(s.grad_avg());
    l.states.push_back(&s);
  }
  l.valid = true;
}

at::Tensor ForeachRMSprop::step(LossClosure closure) {
  at::NoGradGuard no_grad;
  at::Tensor loss;
  if (closure) {
    at::AutoGradMode enable(true);
    loss = closure();
  }
  lists_.resize(param_groups_.size());
  for (std::size_t g = 0; g < param_groups_.size(); ++g) {
    auto& group = param_groups_[g];
    const auto& o = static_cast<const torch::optim::RMSpropOptions&>(group.options());
    detail::GroupLists& l = lists_[g];
    const std::int64_t shape = (o.momentum() > 0 ? 1 : 0) | (o.centered() ? 2 : 0);
    if (!l.gather(group.params(), shape)) build(g, shape);
    if (l.params.empty()) continue;
    for (auto* state : l.states) {
      auto& s = static_cast<torch::optim::RMSpropParamState&>(*state);
      s.step(s.step() + 1);
    }
    const double alpha = o.alpha();
    const std::vector<at::Tensor> grads =
        o.weight_decay() != 0 ? at::_foreach_add(l.grads, l.params, o.weight_decay()) : l.grads;
    auto& square_avg = l.state[0];
    at::_foreach_mul_(square_avg, alpha);
    at::_foreach_addcmul_(square_avg, grads, grads, 1 - alpha);
    std::vector<at::Tensor> avg;
    if (o.centered()) {
      auto& grad_avg = l.state[2];
      at::_foreach_mul_(grad_avg, alpha);
      at::_foreach_add_(grad_avg, grads, 1 - alpha);
      avg = at::_foreach_addcmul(square_avg, grad_avg, grad_avg, -1);
      at::_foreach_sqrt_(avg);
    } else {
      avg = at::_foreach_sqrt(square_avg);
    }
    at::_foreach_add_(avg, o.eps());
    if (o.momentum() > 0) {
      auto& buffers = l.state[1];
      at::_foreach_mul_(buffers, o.momentum());
      at::_foreach_addcdiv_(buffers, grads, avg);
      at::_foreach_add_(l.params, buffers, -o.lr());
    } else {
      at::_foreach_addcdiv_(l.params, grads, avg, -o.lr());
    }
    l.grads.clear();
  }
  return loss;
}

// Lion

ForeachLion::ForeachLion(const std::vector<at::Tensor>& params, LionOptions options) : Lion(params, options) {}

void ForeachLion::load(torch::serialize::InputArchive& archive) {
  Lion::load(archive);
  lists_.clear();
}

void ForeachLion::build(std::size_t g) {
  auto& group = param_groups_[g];
  detail::GroupLists& l = lists_[g];
  l.reset(group.params(), 0, 1);
  for (std::size_t i = 0; i < l.params.size(); ++i) {
    auto& slot = state_[l.keys[i]];
    if (!slot) {
      auto fresh = std::make_unique<LionParamState>();
      fresh->exp_avg(at::zeros_like(l.params[i], at::MemoryFormat::Preserve));
      slot = std::move(fresh);
    }
    l.state[0].push_back(static_cast<LionParamState&>(*slot).exp_avg());
  }
  l.valid = true;
}

at::Tensor ForeachLion::step(LossClosure closure) {
  at::NoGradGuard no_grad;
  at::Tensor loss;
  if (closure) {
    at::AutoGradMode enable(true);
    loss = closure();
  }
  lists_.resize(param_groups_.size());
  for (std::size_t g = 0; g < param_groups_.size(); ++g) {
    auto& group = param_groups_[g];
    const auto& o = static_cast<const LionOptions&>(group.options());
    detail::GroupLists& l = lists_[g];
    if (!l.gather(group.params(), 0)) build(g);
    if (l.params.empty()) continue;
    const double lr = o.lr();
    const auto [beta1, beta2] = o.betas();
    auto& exp_avg = l.state[0];
    if (o.weight_decay() != 0) at::_foreach_mul_(l.params, 1 - lr * o.weight_decay());
    std::vector<at::Tensor> update = at::_foreach_mul(exp_avg, beta1);
    at::_foreach_add_(update, l.grads, 1 - beta1);
    at::_foreach_sign_(update);
    at::_foreach_add_(l.params, update, -lr);
    at::_foreach_mul_(exp_avg, beta2);
    at::_foreach_add_(exp_avg, l.grads, 1 - beta2);
    l.grads.clear();
  }
  return loss;
}

}  // namespace plugtrain
