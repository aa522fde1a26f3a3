// SGD as one fused kernel or foreach kernels (fused_optimizers.h).
#include <algorithm>
#include <cmath>
#include <optional>

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include "train/fused_optimizers.h"

namespace plugtrain {

using detail::laid_out_as;
using detail::lay_out_grads;

MultiTensorSGD::MultiTensorSGD(std::vector<at::Tensor> params, torch::optim::SGDOptions options, OptimizerImpl impl)
    : torch::optim::SGD(std::move(params), options), impl_(impl) {
  TORCH_CHECK(impl != OptimizerImpl::loop, "MultiTensorSGD: the loop form is torch::optim's own");
}

void MultiTensorSGD::write_lr() {
  for (std::size_t g = 0; g < lists_.size(); ++g)
    if (lists_[g].valid && !lists_[g].params.empty())
      lists_[g].lr_tensor(static_cast<const torch::optim::SGDOptions&>(param_groups_[g].options()).lr());
}

bool MultiTensorSGD::ready_to_record() const {
  return !lists_.empty() && std::all_of(lists_.begin(), lists_.end(), [](const detail::GroupLists& l) {
           return l.valid && std::none_of(l.fresh.begin(), l.fresh.end(), [](bool fresh) { return fresh; });
         });
}

void MultiTensorSGD::load(torch::serialize::InputArchive& archive) {
  torch::optim::SGD::load(archive);
  lists_.clear();
}

void MultiTensorSGD::build(std::size_t g, std::int64_t shape) {
  auto& group = param_groups_[g];
  detail::GroupLists& l = lists_[g];
  ++layout_;
  l.reset(group.params(), shape, 1);
  if (shape == 0) {  // no momentum: no state
    l.valid = true;
    return;
  }
  for (std::size_t i = 0; i < l.params.size(); ++i) {
    const auto found = state_.find(l.keys[i]);
    if (found == state_.end()) {  // its first step makes its momentum buffer (a copy of the gradient)
      l.state[0].emplace_back();
      l.fresh.push_back(true);
      continue;
    }
    auto& s = static_cast<torch::optim::SGDParamState&>(*found->second);
    if (impl_ == OptimizerImpl::fused) s.momentum_buffer(laid_out_as(s.momentum_buffer(), l.params[i]));
    l.state[0].push_back(s.momentum_buffer());
    l.fresh.push_back(false);
  }
  l.valid = true;
}

namespace {

std::vector<at::Tensor> pick(const std::vector<at::Tensor>& v, const std::vector<std::size_t>& index) {
  std::vector<at::Tensor> out;
  out.reserve(index.size());
  for (std::size_t i : index) out.push_back(v[i]);
  return out;
}

// One SGD update of `params` as torch::optim's: d_p = grad (+ wd * p); with momentum the buffer
// (on the first step a copy of d_p) and d_p = buf or, Nesterov, d_p + momentum * buf; p -= lr * d_p.
void sgd_update(OptimizerImpl impl, std::vector<at::Tensor>& params, std::vector<at::Tensor>& grads,
                std::vector<at::Tensor>& buffers, const torch::optim::SGDOptions& o, bool first_step,
                detail::GroupLists& l, const at::Tensor& found_inf) {
  const double momentum = o.momentum();
  if (impl == OptimizerImpl::fused) {
    if (first_step)
      // Zeros, not empty: a first step skipped on the device (fp16 found_inf) leaves them as made.
      for (std::size_t i = 0; i < params.size(); ++i) buffers[i] = at::zeros_like(params[i]);
    static const std::vector<at::Tensor> none;
    at::_fused_sgd_(params, grads, momentum != 0 ? buffers : none, o.weight_decay(), momentum, l.lr_tensor(o.lr()),
                    o.dampening(), o.nesterov(), /*maximize=*/false, first_step, /*grad_scale=*/std::nullopt,
                    found_inf.defined() ? std::optional<at::Tensor>(found_inf) : std::nullopt);
    return;
  }
  std::vector<at::Tensor> d_p = o.weight_decay() != 0 ? at::_foreach_add(grads, params, o.weight_decay()) : grads;
  if (momentum != 0) {
    if (first_step) {
      for (std::size_t i = 0; i < params.size(); ++i) buffers[i] = d_p[i].clone();
    } else {
      at::_foreach_mul_(buffers, momentum);
      at::_foreach_add_(buffers, d_p, 1 - o.dampening());
    }
    if (o.nesterov())
      d_p = at::_foreach_add(d_p, buffers, momentum);
    else
      d_p = buffers;
  }
  at::_foreach_add_(params, d_p, -o.lr());
}

}  // namespace

at::Tensor MultiTensorSGD::step(LossClosure closure) {
  at::NoGradGuard no_grad;
  at::Tensor loss;
  if (closure) {
    at::AutoGradMode enable(true);
    loss = closure();
  }
  lists_.resize(param_groups_.size());
  for (std::size_t g = 0; g < param_groups_.size(); ++g) {
    auto& group = param_groups_[g];
    const auto& o = static_cast<const torch::optim::SGDOptions&>(group.options());
    detail::GroupLists& l = lists_[g];
    const std::int64_t shape = o.momentum() != 0 ? 1 : 0;
    if (!l.gather(group.params(), shape)) build(g, shape);
    if (l.params.empty()) continue;
    if (impl_ == OptimizerImpl::fused) lay_out_grads(l);
    const std::size_t fresh = std::count(l.fresh.begin(), l.fresh.end(), true);
    if (fresh == 0 || fresh == l.params.size()) {
      sgd_update(impl_, l.params, l.grads, l.state[0], o, fresh > 0, l, found_inf_);
    } else {  // some parameters have a buffer, some not yet (one call each)
      std::vector<std::size_t> old_ones, new_ones;
      for (std::size_t i = 0; i < l.params.size(); ++i) (l.fresh[i] ? new_ones : old_ones).push_back(i);
      for (const auto* index : {&old_ones, &new_ones}) {
        std::vector<at::Tensor> params = pick(l.params, *index), grads = pick(l.grads, *index),
                                buffers = pick(l.state[0], *index);
        sgd_update(impl_, params, grads, buffers, o, index == &new_ones, l, found_inf_);
        for (std::size_t k = 0; k < index->size(); ++k) l.state[0][(*index)[k]] = buffers[k];
      }
    }
    if (fresh > 0) {  // the new buffers become their parameters' state, as torch::optim's first step makes them
      for (std::size_t i = 0; i < l.params.size(); ++i) {
        if (!l.fresh[i]) continue;
        auto s = std::make_unique<torch::optim::SGDParamState>();
        s->momentum_buffer(l.state[0][i]);
        state_[l.keys[i]] = std::move(s);
        l.fresh[i] = false;
      }
    }
    l.grads.clear();
  }
  return loss;
}

}  // namespace plugtrain
