#include "optim/fused_optimizers.h"

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/TensorOptions.h>

#include "config/optimizer_table.h"
#include "optim/multi_tensor_optimizer.h"
#include "util/error.h"
#include "util/text.h"

namespace plugtrain {

const char* to_string(OptimizerImpl impl) { return word_of(impl); }

namespace {

// Whether ATen registers its fused kernel `op` (e.g. "aten::_fused_adam_") for dense tensors
// of `type` on `device`; if not, why.
Status fused_kernel_registered(const char* op, c10::ScalarType type, c10::Device device) {
  if (!at::isFloatingType(type)) return WhyNot{"the parameters are not floating-point"};
  const auto handle = c10::Dispatcher::singleton().findSchema({op, "tensor_lr"});
  const c10::DispatchKey key = c10::computeDispatchKey(type, at::kStrided, device);
  if (!handle || !handle->hasKernelForDispatchKey(key))
    return WhyNot{std::string("ATen has no ") + op + " kernel for the " + c10::DeviceTypeName(device.type(), true) +
                  " device"};
  return Status::fine();
}

// Whether ATen's fused kernel `op` can step `params`; if not, why.
Status fused_kernel_for(const char* op, const std::vector<at::Tensor>& params) {
  if (params.empty()) return Status::fine();
  const at::Tensor& first = params.front();
  for (const auto& p : params) {
    if (p.device() != first.device() || p.scalar_type() != first.scalar_type())
      return WhyNot{"the parameters are not all on one device and of one type"};
    if (!p.is_non_overlapping_and_dense()) return WhyNot{"a parameter is not a dense tensor"};
  }
  return fused_kernel_registered(op, first.scalar_type(), first.device());
}

Status no_fused_kernel(OptimizerName optimizer) {
  return WhyNot{std::string("ATen has no fused ") + word_of(optimizer) +
                " kernel (fused: " + join(optimizers_with_fused_kernel()) + ")"};
}

}  // namespace

OptimizerImpl resolve_optimizer_impl(OptimizerName optimizer, std::optional<OptimizerImpl> impl,
                                     const std::vector<at::Tensor>& params) {
  if (impl == OptimizerImpl::loop || impl == OptimizerImpl::foreach) return *impl;
  const char* op = optimizer_row(optimizer).fused_kernel;
  const Status fused = op ? fused_kernel_for(op, params) : no_fused_kernel(optimizer);
  if (impl == OptimizerImpl::fused && !fused)
    throw Error("optim.impl = \"fused\": " + fused.why_not() + "; use \"foreach\" or \"auto\"", exit_bad_input);
  return fused ? OptimizerImpl::fused : OptimizerImpl::foreach;
}

Status replayable_on(OptimizerName optimizer, std::optional<OptimizerImpl> impl, c10::Device device) {
  if (!may_be_replayable(optimizer, impl)) return WhyNot{not_replayable_reason()};
  const char* op = optimizer_row(optimizer).fused_kernel;
  if (Status fused = fused_kernel_registered(op, c10::ScalarType::Float, device); !fused)
    return WhyNot{std::string(not_replayable_reason()) + "; " + fused.why_not()};
  return Status::fine();
}

Result<ReplayableOptimizer*> replayable(torch::optim::Optimizer& optimizer) {
  auto* multi_tensor = dynamic_cast<MultiTensorOptimizer*>(&optimizer);
  if (multi_tensor && multi_tensor->impl() == OptimizerImpl::fused)
    return static_cast<ReplayableOptimizer*>(multi_tensor);
  return WhyNot{not_replayable_reason()};
}

}  // namespace plugtrain
