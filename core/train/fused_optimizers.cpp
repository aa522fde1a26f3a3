#include "train/fused_optimizers.h"


#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/TensorOptions.h>

#include "config/optimizer_table.h"
#include "util/error.h"
#include "util/text.h"

namespace plugtrain {

const char* to_string(OptimizerImpl impl) { return word_of(impl); }

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

}  // namespace

OptimizerImpl resolve_optimizer_impl(OptimizerName optimizer, std::optional<OptimizerImpl> impl,
                                     const std::vector<at::Tensor>& params) {
  if (impl == OptimizerImpl::loop || impl == OptimizerImpl::foreach) return *impl;
  const char* op = optimizer_row(optimizer).fused_kernel;
  std::string why = std::string("ATen has no fused ") + word_of(optimizer) + " kernel (fused: " +
                    join(optimizers_with_fused_kernel()) + ")";
  const bool fused = op && fused_kernel_for(op, params, why);
  if (impl == OptimizerImpl::fused && !fused)
    throw Error("optim.impl = \"fused\": " + why + "; use \"foreach\" or \"auto\"", exit_bad_input);
  return fused ? OptimizerImpl::fused : OptimizerImpl::foreach;
}

namespace detail {

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

// The fused kernels' step counts: one float32 per parameter on its device (as PyTorch keeps
// them for its fused optimizers), from the host counts; `views` one 0-dim view of each.
void make_step_counts(detail::GroupLists& l, const std::vector<std::int64_t>& counts) {
  std::vector<float> values(counts.begin(), counts.end());
  l.steps = at::tensor(values, at::TensorOptions().dtype(at::kFloat)).to(l.params.front().device());
  l.step_views.clear();
  for (std::size_t i = 0; i < values.size(); ++i) l.step_views.push_back(l.steps.select(0, std::int64_t(i)));
}

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

ReplayableOptimizer* replayable(torch::optim::Optimizer& optimizer, std::string& why_not) {
  auto fused = [](OptimizerImpl impl) { return impl == OptimizerImpl::fused; };
  if (auto* o = dynamic_cast<MultiTensorAdam*>(&optimizer); o && fused(o->impl())) return o;
  if (auto* o = dynamic_cast<MultiTensorAdamW*>(&optimizer); o && fused(o->impl())) return o;
  if (auto* o = dynamic_cast<MultiTensorSGD*>(&optimizer); o && fused(o->impl())) return o;
  why_not = not_replayable_reason();
  return nullptr;
}

}  // namespace plugtrain
