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

// Whether ATen's fused kernel `op` (e.g. "aten::_fused_adam_") can step `params`; if not, why.
Status fused_kernel_for(const char* op, const std::vector<at::Tensor>& params) {
  if (params.empty()) return Status::fine();
  const at::Tensor& first = params.front();
  for (const auto& p : params) {
    if (p.device() != first.device() || p.scalar_type() != first.scalar_type())
      return WhyNot{"the parameters are not all on one device and of one type"};
    if (!p.is_non_overlapping_and_dense()) return WhyNot{"a parameter is not a dense tensor"};
  }
  if (!at::isFloatingType(first.scalar_type())) return WhyNot{"the parameters are not floating-point"};
  const auto handle = c10::Dispatcher::singleton().findSchema({op, "tensor_lr"});
  const c10::DispatchKey key = c10::computeDispatchKey(first.scalar_type(), at::kStrided, first.device());
  if (!handle || !handle->hasKernelForDispatchKey(key))
    return WhyNot{std::string("ATen has no ") + op + " kernel for the " +
                  c10::DeviceTypeName(first.device().type(), true) + " device"};
  return Status::fine();
}

}  // namespace

OptimizerImpl resolve_optimizer_impl(OptimizerName optimizer, std::optional<OptimizerImpl> impl,
                                     const std::vector<at::Tensor>& params) {
  if (impl == OptimizerImpl::loop || impl == OptimizerImpl::foreach) return *impl;
  const char* op = optimizer_row(optimizer).fused_kernel;
  const Status fused = op ? fused_kernel_for(op, params)
                          : Status(WhyNot{std::string("ATen has no fused ") + word_of(optimizer) +
                                          " kernel (fused: " + join(optimizers_with_fused_kernel()) + ")"});
  if (impl == OptimizerImpl::fused && !fused)
    throw Error("optim.impl = \"fused\": " + fused.why_not() + "; use \"foreach\" or \"auto\"", exit_bad_input);
  return fused ? OptimizerImpl::fused : OptimizerImpl::foreach;
}

Result<ReplayableOptimizer*> replayable(torch::optim::Optimizer& optimizer) {
  auto* multi_tensor = dynamic_cast<MultiTensorOptimizer*>(&optimizer);
  if (multi_tensor && multi_tensor->impl() == OptimizerImpl::fused)
    return static_cast<ReplayableOptimizer*>(multi_tensor);
  return WhyNot{not_replayable_reason()};
}

}  // namespace plugtrain
