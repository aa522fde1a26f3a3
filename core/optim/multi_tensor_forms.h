// The forms an optimizer steps in (optim.impl), as strategies the shared base
// (optim/multi_tensor_optimizer.h) dispatches on, and what each optimizer writes once for all of
// them (MultiTensorAlgorithm):
//   fused    the optimizer's one ATen kernel (at::_fused_adam_, _fused_adamw_, _fused_sgd_): one
//            pass over each parameter; its step counts and learning rate are tensors on the
//            parameters' device, which a replayed (CUDA-graph) step needs
//   foreach  the optimizer's arithmetic as at::_foreach_* operations, each once over all
//            parameters of the group (on an accelerator a few kernels for all of them)
//   loop     the same operations tensor by tensor, as torch::optim's own loops call them (the
//            tests hold the two to the same bits)
// An algorithm's arithmetic is written once against ListOps, which foreach and loop implement;
// the fused form calls the algorithm's kernel instead.
//
// fp16 loss scaling stays Precision's (unscale, overflow check, skip): the fused kernels'
// grad_scale argument is not used, and found_inf only once a recorded step decides skips on the
// device (ReplayableOptimizer::skip_when, optim/fused_optimizers.h).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include <ATen/core/Tensor.h>
#include <torch/optim/optimizer.h>

#include "config/choices.h"
#include "optim/multi_tensor_lists.h"

namespace plugtrain {

// The list operations the foreach and loop forms share: each is ATen's _foreach_ operation of
// the same name (ForeachOps) or that operation on each tensor in turn (LoopOps). In-place ones
// end in _, as in ATen.
class ListOps {
 public:
  using Tensors = std::vector<at::Tensor>;
  using List = at::TensorList;
  using Scalars = at::ArrayRef<at::Scalar>;
  virtual ~ListOps() = default;
  virtual Tensors add(List a, List b, const at::Scalar& alpha) const = 0;  // a + alpha b
  virtual Tensors mul(List a, const at::Scalar& s) const = 0;
  virtual Tensors sqrt(List a) const = 0;
  virtual Tensors addcmul(List a, List b, List c, const at::Scalar& value) const = 0;  // a + value b c
  virtual void add_(List a, List b, const at::Scalar& alpha) const = 0;
  virtual void add_(List a, const at::Scalar& s) const = 0;
  virtual void mul_(List a, const at::Scalar& s) const = 0;
  virtual void div_(List a, Scalars s) const = 0;  // a[i] /= s[i]
  virtual void addcmul_(List a, List b, List c, const at::Scalar& value) const = 0;
  virtual void addcdiv_(List a, List b, List c, const at::Scalar& value) const = 0;  // a += value b / c
  virtual void addcdiv_(List a, List b, List c, Scalars values) const = 0;
  virtual void maximum_(List a, List b) const = 0;
  virtual void sqrt_(List a) const = 0;
  virtual void sign_(List a) const = 0;
};

class OptimizerForm;

// What each optimizer's file defines (its state and its arithmetic, once); the shared base
// calls it, on the lists it keeps (optim/multi_tensor_optimizer.h).
class MultiTensorAlgorithm {
 public:
  using Options = torch::optim::OptimizerOptions;
  // Which state tensors `options` call for (amsgrad, momentum...) as a number: the lists are
  // built again when it changes.
  virtual std::int64_t state_shape(const Options& options) const = 0;
  // The state of the group's parameters with a gradient (l.params), made where missing as
  // torch::optim's first step makes it, into l.state, l.counts (its host step counts, if it
  // keeps any) and l.fresh (the parameters whose state their first step makes). With a fused
  // kernel, each state tensor as form.lay_out gives it (and so kept in the state object too).
  virtual void build_state(GroupLists& l, const Options& options, const OptimizerForm& form) = 0;
  // One step of the group in the foreach or loop form (l.counts are already advanced).
  virtual void update(const ListOps& ops, GroupLists& l, const Options& options) = 0;
  // One step as the fused kernel, with the learning rate `lr` on the device and `found_inf`
  // (a step skipped on the device leaves everything as it was). Only the optimizers that
  // config/optimizer_table.cpp gives a fused kernel override it; the others throw.
  virtual void fused_update(GroupLists& l, const Options& options, const at::Tensor& lr,
                            const std::optional<at::Tensor>& found_inf);

 protected:
  ~MultiTensorAlgorithm() = default;
};

// A form: how a group's lists are kept and stepped.
class OptimizerForm {
 public:
  virtual ~OptimizerForm() = default;
  virtual OptimizerImpl impl() const = 0;
  // A state tensor of `param` as this form's kernels take it (fused: laid out as the parameter).
  virtual at::Tensor lay_out(const at::Tensor& state, const at::Tensor& /*param*/) const { return state; }
  // After a group's lists are built (fused: the step counts on the device).
  virtual void built(GroupLists& /*l*/) const {}
  // One step of the group: `found_inf` undefined unless skips are decided on the device.
  virtual void step(MultiTensorAlgorithm& algorithm, GroupLists& l, const torch::optim::OptimizerOptions& options,
                    const at::Tensor& found_inf) const = 0;
};

// The form `impl` names (one shared, stateless instance each).
const OptimizerForm& optimizer_form(OptimizerImpl impl);

}  // namespace plugtrain
