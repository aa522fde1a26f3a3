#include "optim/multi_tensor_rmsprop.h"

#include <ATen/ATen.h>

namespace plugtrain {

using torch::optim::RMSpropOptions;
using torch::optim::RMSpropParamState;

std::int64_t MultiTensorRMSprop::state_shape(const Options& options) const {
  const auto& o = static_cast<const RMSpropOptions&>(options);
  return (o.momentum() > 0 ? 1 : 0) | (o.centered() ? 2 : 0);
}

// state[0] square_avg, state[1] momentum_buffer (momentum), state[2] grad_avg (centered);
// counts: step.
void MultiTensorRMSprop::build_state(GroupLists& l, const Options& options, const OptimizerForm&) {
  const auto& o = static_cast<const RMSpropOptions&>(options);
  l.state.resize(3);
  for (std::size_t i = 0; i < l.params.size(); ++i) {
    const at::Tensor& p = l.params[i];
    auto& slot = state_[l.keys[i]];
    if (!slot) {  // as torch::optim's first step of a parameter
      auto fresh = std::make_unique<RMSpropParamState>();
      fresh->step(0);
      fresh->square_avg(at::zeros_like(p, at::MemoryFormat::Preserve));
      slot = std::move(fresh);
    }
    auto& s = static_cast<RMSpropParamState&>(*slot);
    if (o.momentum() > 0 && !s.momentum_buffer().defined())
      s.momentum_buffer(at::zeros_like(p, at::MemoryFormat::Preserve));
    if (o.centered() && !s.grad_avg().defined()) s.grad_avg(at::zeros_like(p, at::MemoryFormat::Preserve));
    l.state[0].push_back(s.square_avg());
    if (o.momentum() > 0) l.state[1].push_back(s.momentum_buffer());
    if (o.centered()) l.state[2].push_back(s.grad_avg());
    l.counts.push_back(&s.step());
  }
}

// As torch::optim's: g = grad (+ wd * p); square_avg = alpha * square_avg + (1 - alpha) g^2;
// avg = sqrt(square_avg (- grad_avg^2, centered)) + eps; p -= lr * (momentum buffer of g / avg,
// or g / avg).
void MultiTensorRMSprop::update(const ListOps& ops, GroupLists& l, const Options& options) {
  const auto& o = static_cast<const RMSpropOptions&>(options);
  const double alpha = o.alpha();
  const std::vector<at::Tensor> grads = o.weight_decay() != 0 ? ops.add(l.grads, l.params, o.weight_decay()) : l.grads;
  auto& square_avg = l.state[0];
  ops.mul_(square_avg, alpha);
  ops.addcmul_(square_avg, grads, grads, 1 - alpha);
  std::vector<at::Tensor> avg;
  if (o.centered()) {
    auto& grad_avg = l.state[2];
    ops.mul_(grad_avg, alpha);
    ops.add_(grad_avg, grads, 1 - alpha);
    avg = ops.addcmul(square_avg, grad_avg, grad_avg, -1);
    ops.sqrt_(avg);
  } else {
    avg = ops.sqrt(square_avg);
  }
  ops.add_(avg, o.eps());
  if (o.momentum() > 0) {
    auto& buffers = l.state[1];
    ops.mul_(buffers, o.momentum());
    ops.addcdiv_(buffers, grads, avg, 1);
    ops.add_(l.params, buffers, -o.lr());
  } else {
    ops.addcdiv_(l.params, grads, avg, -o.lr());
  }
}

}  // namespace plugtrain
