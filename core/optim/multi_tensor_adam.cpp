#include "optim/multi_tensor_adam.h"

#include <cmath>

#include <ATen/ATen.h>

namespace plugtrain {

template <class Torch, class Options, class State, bool kDecoupled>
std::int64_t MultiTensorAdamT<Torch, Options, State, kDecoupled>::state_shape(const AnyOptions& options) const {
  return static_cast<const Options&>(options).amsgrad() ? 1 : 0;
}

// state[0] exp_avg, state[1] exp_avg_sq, state[2] max_exp_avg_sq (amsgrad); counts: step.
template <class Torch, class Options, class State, bool kDecoupled>
void MultiTensorAdamT<Torch, Options, State, kDecoupled>::build_state(GroupLists& l, const AnyOptions& options,
                                                                      const OptimizerForm& form) {
  const bool amsgrad = static_cast<const Options&>(options).amsgrad();
  l.state.resize(3);
  for (std::size_t i = 0; i < l.params.size(); ++i) {
    const at::Tensor& p = l.params[i];
    auto& slot = this->state_[l.keys[i]];
    if (!slot) {  // as torch::optim's first step of a parameter
      auto fresh = std::make_unique<State>();
      fresh->step(0);
      fresh->exp_avg(at::zeros_like(p, at::MemoryFormat::Preserve));
      fresh->exp_avg_sq(at::zeros_like(p, at::MemoryFormat::Preserve));
      slot = std::move(fresh);
    }
    auto& s = static_cast<State&>(*slot);
    if (amsgrad && !s.max_exp_avg_sq().defined()) s.max_exp_avg_sq(at::zeros_like(p, at::MemoryFormat::Preserve));
    s.exp_avg(form.lay_out(s.exp_avg(), p));
    s.exp_avg_sq(form.lay_out(s.exp_avg_sq(), p));
    l.state[0].push_back(s.exp_avg());
    l.state[1].push_back(s.exp_avg_sq());
    if (amsgrad) {
      s.max_exp_avg_sq(form.lay_out(s.max_exp_avg_sq(), p));
      l.state[2].push_back(s.max_exp_avg_sq());
    }
    l.counts.push_back(&s.step());
  }
}

// torch::optim's arithmetic, operation by operation: with L2 weight decay (Adam) the gradient
// gains wd * p; decoupled (AdamW) the parameter shrinks by lr * wd first.
template <class Torch, class Options, class State, bool kDecoupled>
void MultiTensorAdamT<Torch, Options, State, kDecoupled>::update(const ListOps& ops, GroupLists& l,
                                                                 const AnyOptions& options) {
  const auto& o = static_cast<const Options&>(options);
  const auto [beta1, beta2] = o.betas();
  const double lr = o.lr(), wd = o.weight_decay();
  std::vector<at::Tensor> decayed;
  const std::vector<at::Tensor>* grads = &l.grads;
  if (wd != 0) {
    if constexpr (kDecoupled) {
      ops.mul_(l.params, 1 - lr * wd);
    } else {
      decayed = ops.add(l.grads, l.params, wd);
      grads = &decayed;
    }
  }
  auto& exp_avg = l.state[0];
  auto& exp_avg_sq = l.state[1];
  ops.mul_(exp_avg, beta1);
  ops.add_(exp_avg, *grads, 1 - beta1);
  ops.mul_(exp_avg_sq, beta2);
  ops.addcmul_(exp_avg_sq, *grads, *grads, 1 - beta2);
  if (o.amsgrad()) ops.maximum_(l.state[2], exp_avg_sq);
  // The bias corrections from the host step counts, in double as torch::optim computes them.
  std::vector<at::Scalar> bias_correction2_sqrt, neg_step_size;
  for (const std::int64_t* count : l.counts) {
    const double step = double(*count);
    bias_correction2_sqrt.emplace_back(std::sqrt(1 - std::pow(beta2, step)));
    neg_step_size.emplace_back(-(lr / (1 - std::pow(beta1, step))));
  }
  std::vector<at::Tensor> denom = ops.sqrt(o.amsgrad() ? l.state[2] : exp_avg_sq);
  ops.div_(denom, bias_correction2_sqrt);
  ops.add_(denom, o.eps());
  ops.addcdiv_(l.params, exp_avg, denom, neg_step_size);
}

template <class Torch, class Options, class State, bool kDecoupled>
void MultiTensorAdamT<Torch, Options, State, kDecoupled>::fused_update(GroupLists& l, const AnyOptions& options,
                                                                       const at::Tensor& lr,
                                                                       const std::optional<at::Tensor>& found_inf) {
  const auto& o = static_cast<const Options&>(options);
  const auto [beta1, beta2] = o.betas();
  if constexpr (kDecoupled)
    at::_fused_adamw_(l.params, l.grads, l.state[0], l.state[1], l.state[2], l.step_views, lr, beta1, beta2,
                      o.weight_decay(), o.eps(), o.amsgrad(), /*maximize=*/false, /*grad_scale=*/std::nullopt,
                      found_inf);
  else
    at::_fused_adam_(l.params, l.grads, l.state[0], l.state[1], l.state[2], l.step_views, lr, beta1, beta2,
                     o.weight_decay(), o.eps(), o.amsgrad(), /*maximize=*/false, /*grad_scale=*/std::nullopt,
                     found_inf);
}

template class MultiTensorAdamT<torch::optim::Adam, torch::optim::AdamOptions, torch::optim::AdamParamState, false>;
template class MultiTensorAdamT<torch::optim::AdamW, torch::optim::AdamWOptions, torch::optim::AdamWParamState, true>;

}  // namespace plugtrain
