#include "train/fused_optimizers.h"

#include <algorithm>
#include <optional>
#include <cmath>

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/grad_mode.h>
#include <c10/core/TensorOptions.h>

#include "util/error.h"

namespace plugtrain {

const char* to_string(OptimizerImpl impl) {
  switch (impl) {
    case OptimizerImpl::loop: return "loop";
    case OptimizerImpl::foreach: return "foreach";
    case OptimizerImpl::fused: return "fused";
  }
  return "?";
}

namespace {

// Whether ATen's fused kernel `op` (e.g. "aten::_fused_adam_") can step `params`; if not, why.
bool fused_kernel_for(const char* op, const std::vector<at::Tensor>& params, std::string& why) {
  if (params.empty()) return true;
  const at::Tensor& first = params.front();
  for (const auto& p : params) {
    if (p.device() != first.device() || p.scalar_type() != first.scalar_type()) {
      why = "the parameters are not all on one device and of one type";
      return false;
    }
    if (!p.is_non_overlapping_and_dense()) {
      why = "a parameter is not a dense tensor";
      return false;
    }
  }
  if (!at::isFloatingType(first.scalar_type())) {
    why = "the parameters are not floating-point";
    return false;
  }
  const auto handle = c10::Dispatcher::singleton().findSchema({op, "tensor_lr"});
  const c10::DispatchKey key = c10::computeDispatchKey(first.scalar_type(), at::kStrided, first.device());
  if (!handle || !handle->hasKernelForDispatchKey(key)) {
    why = std::string("ATen has no ") + op + " kernel for the " + c10::DeviceTypeName(first.device().type(), true) +
          " device";
    return false;
  }
  return true;
}

// The fused CPU kernels walk each tensor's memory in order: a gradient or state tensor must be
// laid out as its parameter (it always is, unless set by hand or loaded from elsewhere).
at::Tensor laid_out_as(const at::Tensor& t, const at::Tensor& p) {
  if (t.strides() == p.strides()) return t;
  return at::empty_like(p).copy_(t);
}

void lay_out_grads(detail::GroupLists& l) {
  for (std::size_t i = 0; i < l.grads.size(); ++i)
    if (l.grads[i].strides() != l.params[i].strides()) l.grads[i] = laid_out_as(l.grads[i], l.params[i]);
}

std::vector<at::Tensor> pick(const std::vector<at::Tensor>& v, const std::vector<std::size_t>& index) {
  std::vector<at::Tensor> out;
  out.reserve(index.size());
  for (std::size_t i : index) out.push_back(v[i]);
  return out;
}

// The fused kernels' step counts: one float32 per parameter on its device (as PyTorch keeps
// them for its fused optimizers), from the host counts; `views` one 0-dim view of each.
void make_step_counts(detail::GroupLists& l, const std::vector<std::int64_t>& counts) {
  std::vector<float> values(counts.begin(), counts.end());
  l.steps = at::tensor(values, at::TensorOptions().dtype(at::kFloat)).to(l.params.front().device());
  l.step_views.clear();
  for (std::size_t i = 0; i < values.size(); ++i) l.step_views.push_back(l.steps.select(0, std::int64_t(i)));
}

}  // namespace

OptimizerImpl resolve_optimizer_impl(const std::string& optimizer, const std::string& impl,
                                     const std::vector<at::Tensor>& params) {
  if (impl == "loop") return OptimizerImpl::loop;
  if (impl == "foreach") return OptimizerImpl::foreach;
  if (impl != "auto" && impl != "fused") throw Error("optim.impl: unknown '" + impl + "'", exit_bad_input);
  const char* op = optimizer == "sgd"     ? "aten::_fused_sgd_"
                   : optimizer == "adam"  ? "aten::_fused_adam_"
                   : optimizer == "adamw" ? "aten::_fused_adamw_"
                                          : nullptr;
  std::string why = "ATen has no fused " + optimizer + " kernel (fused: sgd, adam, adamw)";
  const bool fused = op && fused_kernel_for(op, params, why);
  if (impl == "fused" && !fused)
    throw Error("optim.impl = \"fused\": " + why + "; use \"foreach\" or \"auto\"", exit_bad_input);
  return fused ? OptimizerImpl::fused : OptimizerImpl::foreach;
}

namespace detail {

bool GroupLists::gather(const std::vector<at::Tensor>& group_params, std::int64_t options_shape) {
  grads.clear();
  bool same = valid && shape == options_shape;
  std::size_t n = 0;
  for (const auto& p : group_params) {
    const at::Tensor& g = p.grad();
    if (!g.defined()) continue;
    if (same && (n >= keys.size() || keys[n] != p.unsafeGetTensorImpl())) same = false;
    grads.push_back(g);
    ++n;
  }
  return same && n == keys.size();
}

void GroupLists::reset(const std::vector<at::Tensor>& group_params, std::int64_t options_shape, std::size_t slots) {
  valid = false;
  shape = options_shape;
  keys.clear();
  params.clear();
  states.clear();
  fresh.clear();
  state.assign(slots, {});
  steps = at::Tensor();
  step_views.clear();
  for (const auto& p : group_params)
    if (p.grad().defined()) {
      keys.push_back(p.unsafeGetTensorImpl());
      params.push_back(p);
    }
}

const at::Tensor& GroupLists::lr_tensor(double value) {
  const c10::Device device = params.front().device();
  if (!lr.defined() || lr.device() != device) {
    // The CPU kernels read it as a double; the CUDA ones as a float on the device.
    lr = at::full({}, value, at::TensorOptions().device(device).dtype(device.is_cpu() ? at::kDouble : at::kFloat));
    lr_value = value;
  } else if (value != lr_value) {
    lr.fill_(value);
    lr_value = value;
  }
  return lr;
}

}  // namespace detail

// ---------------------------------------------------------------------------------------------
// Adam, AdamW

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

// ---------------------------------------------------------------------------------------------
// SGD

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

// ---------------------------------------------------------------------------------------------
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

// ---------------------------------------------------------------------------------------------
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

ReplayableOptimizer* replayable(torch::optim::Optimizer& optimizer, std::string& why_not) {
  auto fused = [](OptimizerImpl impl) { return impl == OptimizerImpl::fused; };
  if (auto* o = dynamic_cast<MultiTensorAdam*>(&optimizer); o && fused(o->impl())) return o;
  if (auto* o = dynamic_cast<MultiTensorAdamW*>(&optimizer); o && fused(o->impl())) return o;
  if (auto* o = dynamic_cast<MultiTensorSGD*>(&optimizer); o && fused(o->impl())) return o;
  why_not = "the optimizer is not in its fused form (optim.impl \"fused\" or \"auto\" with sgd, adam or adamw): "
            "the other forms pass host numbers to their kernels, which a replay would repeat unchanged";
  return nullptr;
}

}  // namespace plugtrain
