#include "optim/multi_tensor_sgd.h"

#include <algorithm>

#include <ATen/ATen.h>

namespace plugtrain {

using torch::optim::SGDOptions;
using torch::optim::SGDParamState;

std::int64_t MultiTensorSGD::state_shape(const Options& options) const {
  return static_cast<const SGDOptions&>(options).momentum() != 0 ? 1 : 0;
}

// state[0]: the momentum buffers (with momentum; none before a parameter's first step).
void MultiTensorSGD::build_state(GroupLists& l, const Options& options, const OptimizerForm& form) {
  l.state.resize(1);
  if (state_shape(options) == 0) return;  // no momentum: no state
  for (std::size_t i = 0; i < l.params.size(); ++i) {
    const auto found = state_.find(l.keys[i]);
    if (found == state_.end()) {  // its first step makes its momentum buffer (a copy of the gradient)
      l.state[0].emplace_back();
      l.fresh.push_back(true);
      continue;
    }
    auto& s = static_cast<SGDParamState&>(*found->second);
    s.momentum_buffer(form.lay_out(s.momentum_buffer(), l.params[i]));
    l.state[0].push_back(s.momentum_buffer());
    l.fresh.push_back(false);
  }
}

namespace {

std::vector<at::Tensor> pick(const std::vector<at::Tensor>& v, const std::vector<std::size_t>& index) {
  std::vector<at::Tensor> out;
  out.reserve(index.size());
  for (std::size_t i : index) out.push_back(v[i]);
  return out;
}

}  // namespace

// One call for the group, or, when some parameters have a buffer and some not yet, one for each
// kind; then the new buffers become their parameters' state, as torch::optim's first step
// makes them.
void MultiTensorSGD::by_first_step(GroupLists& l, const Part& part) {
  const std::size_t fresh = std::count(l.fresh.begin(), l.fresh.end(), true);
  if (fresh == 0 || fresh == l.params.size()) {
    part(l.params, l.grads, l.state[0], fresh > 0);
  } else {
    std::vector<std::size_t> old_ones, new_ones;
    for (std::size_t i = 0; i < l.params.size(); ++i) (l.fresh[i] ? new_ones : old_ones).push_back(i);
    for (const auto* index : {&old_ones, &new_ones}) {
      std::vector<at::Tensor> params = pick(l.params, *index), grads = pick(l.grads, *index),
                              buffers = pick(l.state[0], *index);
      part(params, grads, buffers, index == &new_ones);
      for (std::size_t k = 0; k < index->size(); ++k) l.state[0][(*index)[k]] = buffers[k];
    }
  }
  if (fresh == 0) return;
  for (std::size_t i = 0; i < l.params.size(); ++i) {
    if (!l.fresh[i]) continue;
    auto s = std::make_unique<SGDParamState>();
    s->momentum_buffer(l.state[0][i]);
    state_[l.keys[i]] = std::move(s);
    l.fresh[i] = false;
  }
}

// As torch::optim's: d_p = grad (+ wd * p); with momentum the buffer (on the first step a copy
// of d_p, else momentum * buf + (1 - dampening) * d_p) and d_p = buf or, Nesterov,
// d_p + momentum * buf; p -= lr * d_p.
void MultiTensorSGD::update(const ListOps& ops, GroupLists& l, const Options& options) {
  const auto& o = static_cast<const SGDOptions&>(options);
  const double momentum = o.momentum();
  by_first_step(l, [&](std::vector<at::Tensor>& params, std::vector<at::Tensor>& grads,
                       std::vector<at::Tensor>& buffers, bool first_step) {
    std::vector<at::Tensor> d_p = o.weight_decay() != 0 ? ops.add(grads, params, o.weight_decay()) : grads;
    if (momentum != 0) {
      if (first_step) {
        for (std::size_t i = 0; i < params.size(); ++i) buffers[i] = d_p[i].clone();
      } else {
        ops.mul_(buffers, momentum);
        ops.add_(buffers, d_p, 1 - o.dampening());
      }
      if (o.nesterov())
        d_p = ops.add(d_p, buffers, momentum);
      else
        d_p = buffers;
    }
    ops.add_(params, d_p, -o.lr());
  });
}

void MultiTensorSGD::fused_update(GroupLists& l, const Options& options, const at::Tensor& lr,
                                  const std::optional<at::Tensor>& found_inf) {
  const auto& o = static_cast<const SGDOptions&>(options);
  const double momentum = o.momentum();
  by_first_step(l, [&](std::vector<at::Tensor>& params, std::vector<at::Tensor>& grads,
                       std::vector<at::Tensor>& buffers, bool first_step) {
    if (first_step)
      // Zeros, not empty: a first step skipped on the device (fp16 found_inf) leaves them as made.
      for (std::size_t i = 0; i < params.size(); ++i) buffers[i] = at::zeros_like(params[i]);
    static const std::vector<at::Tensor> none;
    at::_fused_sgd_(params, grads, momentum != 0 ? buffers : none, o.weight_decay(), momentum, lr, o.dampening(),
                    o.nesterov(), /*maximize=*/false, first_step, /*grad_scale=*/std::nullopt, found_inf);
  });
}

}  // namespace plugtrain
