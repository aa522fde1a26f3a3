// Adam and AdamW as one fused kernel or foreach kernels (fused_optimizers.h).
#include <algorithm>
#include <cmath>
#include <optional>

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include "train/fused_optimizers.h"

namespace plugtrain {

using detail::laid_out_as;
using detail::lay_out_grads;
using detail::make_step_counts;

template <class Base, class Options, class State, bool kDecoupled>
MultiTensorAdamT<Base, Options, State, kDecoupled>::MultiTensorAdamT(std::vector<at::Tensor> params, Options options,
                                                                     OptimizerImpl impl)
    : Base(std::move(params), options), impl_(impl) {
  TORCH_CHECK(impl != OptimizerImpl::loop, "MultiTensorAdam: the loop form is torch::optim's own");
}

template <class Base, class Options, class State, bool kDecoupled>
void MultiTensorAdamT<Base, Options, State, kDecoupled>::load(torch::serialize::InputArchive& archive) {
  Base::load(archive);
  lists_.clear();  // the state objects were replaced
}

template <class Base, class Options, class State, bool kDecoupled>
void MultiTensorAdamT<Base, Options, State, kDecoupled>::build(std::size_t g, std::int64_t shape) {
  auto& group = this->param_groups_[g];
  const auto& options = static_cast<const Options&>(group.options());
  detail::GroupLists& l = lists_[g];
  // The device's step counts are the true ones when skips are decided there: keep them.
  if (l.steps.defined()) sync_host_steps();
  ++layout_;
  l.reset(group.params(), shape, 3);
  const bool fused = impl_ == OptimizerImpl::fused;
  std::vector<std::int64_t> counts;
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
    if (options.amsgrad() && !s.max_exp_avg_sq().defined())
      s.max_exp_avg_sq(at::zeros_like(p, at::MemoryFormat::Preserve));
    if (fused) {
      s.exp_avg(laid_out_as(s.exp_avg(), p));
      s.exp_avg_sq(laid_out_as(s.exp_avg_sq(), p));
      if (options.amsgrad()) s.max_exp_avg_sq(laid_out_as(s.max_exp_avg_sq(), p));
    }
    l.state[0].push_back(s.exp_avg());
    l.state[1].push_back(s.exp_avg_sq());
    if (options.amsgrad()) l.state[2].push_back(s.max_exp_avg_sq());
    l.states.push_back(&s);
    counts.push_back(s.step());
  }
  if (fused && !l.params.empty()) make_step_counts(l, counts);
  l.valid = true;
}

template <class Base, class Options, class State, bool kDecoupled>
at::Tensor MultiTensorAdamT<Base, Options, State, kDecoupled>::step(torch::optim::Optimizer::LossClosure closure) {
  at::NoGradGuard no_grad;
  at::Tensor loss;
  if (closure) {
    at::AutoGradMode enable(true);
    loss = closure();
  }
  lists_.resize(this->param_groups_.size());
  for (std::size_t g = 0; g < this->param_groups_.size(); ++g) {
    auto& group = this->param_groups_[g];
    const auto& o = static_cast<const Options&>(group.options());
    detail::GroupLists& l = lists_[g];
    const std::int64_t shape = o.amsgrad() ? 1 : 0;
    if (!l.gather(group.params(), shape)) build(g, shape);
    if (l.params.empty()) continue;
    for (auto* state : l.states) {
      auto& s = static_cast<State&>(*state);
      s.step(s.step() + 1);
    }
    const auto [beta1, beta2] = o.betas();
    const double lr = o.lr(), wd = o.weight_decay(), eps = o.eps();
    if (impl_ == OptimizerImpl::fused) {
      lay_out_grads(l);
      l.steps.add_(1);
      const at::Tensor& lr_tensor = l.lr_tensor(lr);
      const std::optional<at::Tensor> found_inf =
          found_inf_.defined() ? std::optional<at::Tensor>(found_inf_) : std::nullopt;
      if constexpr (kDecoupled)
        at::_fused_adamw_(l.params, l.grads, l.state[0], l.state[1], l.state[2], l.step_views, lr_tensor, beta1, beta2,
                          wd, eps, o.amsgrad(), /*maximize=*/false, /*grad_scale=*/std::nullopt, found_inf);
      else
        at::_fused_adam_(l.params, l.grads, l.state[0], l.state[1], l.state[2], l.step_views, lr_tensor, beta1, beta2,
                         wd, eps, o.amsgrad(), /*maximize=*/false, /*grad_scale=*/std::nullopt, found_inf);
      if (found_inf) l.steps.sub_(*found_inf);  // a skipped step is not counted (PyTorch's _fused_adam)
    } else {
      // torch::optim's arithmetic, operation by operation, over all parameters at once.
      std::vector<at::Tensor> decayed;
      const std::vector<at::Tensor>* grads = &l.grads;
      if (wd != 0) {
        if constexpr (kDecoupled) {
          at::_foreach_mul_(l.params, 1 - lr * wd);
        } else {
          decayed = at::_foreach_add(l.grads, l.params, wd);
          grads = &decayed;
        }
      }
      at::_foreach_mul_(l.state[0], beta1);
      at::_foreach_add_(l.state[0], *grads, 1 - beta1);
      at::_foreach_mul_(l.state[1], beta2);
      at::_foreach_addcmul_(l.state[1], *grads, *grads, 1 - beta2);
      if (o.amsgrad()) at::_foreach_maximum_(l.state[2], l.state[1]);
      // Bias corrections from the host step counts, in double as torch::optim computes them.
      std::vector<at::Scalar> bias_correction2_sqrt, neg_step_size;
      for (const auto* state : l.states) {
        const double step = double(static_cast<const State&>(*state).step());
        bias_correction2_sqrt.emplace_back(std::sqrt(1 - std::pow(beta2, step)));
        neg_step_size.emplace_back(-(lr / (1 - std::pow(beta1, step))));
      }
      std::vector<at::Tensor> denom = at::_foreach_sqrt(o.amsgrad() ? l.state[2] : l.state[1]);
      at::_foreach_div_(denom, bias_correction2_sqrt);
      at::_foreach_add_(denom, eps);
      at::_foreach_addcdiv_(l.params, l.state[0], denom, neg_step_size);
    }
    l.grads.clear();  // not kept alive into the next forward
  }
  return loss;
}

template <class Base, class Options, class State, bool kDecoupled>
void MultiTensorAdamT<Base, Options, State, kDecoupled>::write_lr() {
  for (std::size_t g = 0; g < lists_.size(); ++g)
    if (lists_[g].valid && !lists_[g].params.empty())
      lists_[g].lr_tensor(static_cast<const Options&>(this->param_groups_[g].options()).lr());
}

template <class Base, class Options, class State, bool kDecoupled>
std::vector<std::int64_t> MultiTensorAdamT<Base, Options, State, kDecoupled>::host_steps() const {
  std::vector<std::int64_t> steps;
  for (const auto& l : lists_)
    for (const auto* state : l.states) steps.push_back(static_cast<const State&>(*state).step());
  return steps;
}

template <class Base, class Options, class State, bool kDecoupled>
void MultiTensorAdamT<Base, Options, State, kDecoupled>::restore_host_steps(const std::vector<std::int64_t>& steps) {
  std::size_t i = 0;
  for (auto& l : lists_)
    for (auto* state : l.states)
      if (i < steps.size()) static_cast<State&>(*state).step(steps[i++]);
}

template <class Base, class Options, class State, bool kDecoupled>
void MultiTensorAdamT<Base, Options, State, kDecoupled>::sync_host_steps() {
  for (auto& l : lists_) {
    if (!l.steps.defined()) continue;
    const at::Tensor counts = l.steps.to(at::kCPU);
    for (std::size_t i = 0; i < l.states.size(); ++i)
      static_cast<State&>(*l.states[i]).step(static_cast<std::int64_t>(counts[std::int64_t(i)].item<float>()));
  }
}

template <class Base, class Options, class State, bool kDecoupled>
bool MultiTensorAdamT<Base, Options, State, kDecoupled>::ready_to_record() const {
  return !lists_.empty() && std::all_of(lists_.begin(), lists_.end(), [](const auto& l) { return l.valid; });
}

template class MultiTensorAdamT<torch::optim::Adam, torch::optim::AdamOptions, torch::optim::AdamParamState, false>;
template class MultiTensorAdamT<torch::optim::AdamW, torch::optim::AdamWOptions, torch::optim::AdamWParamState, true>;

}  // namespace plugtrain
