// The optimizers' multi-tensor forms (optim.impl): one ATen kernel per parameter group and step
// instead of LibTorch's handful of operators per parameter.
//   fused    at::_fused_adam_, _fused_adamw_, _fused_sgd_: one pass over each parameter, the
//            step counts and the learning rate as tensors on the parameters' device
//   foreach  at::_foreach_* (every optimizer): each operation once over all parameters of the
//            group (on an accelerator a few kernels for all of them; on the CPU a loop inside ATen)
// Each is a subclass of the LibTorch optimizer it replaces (or of our Lion), with the same
// options and the same per-parameter state classes and keys (AdamParamState exp_avg,
// exp_avg_sq, step; SGDParamState momentum_buffer; ...), so save/load and every checkpoint are
// the same whatever the form: a run written with one resumes with any other. The update is the
// same arithmetic (within float rounding: the fused kernels compute in one pass).
//
// The lists a kernel takes are gathered once (first step, after load, when the parameters
// with a gradient change) and reused: a step does no per-parameter lookup and never waits for
// the device. The per-parameter `step` in the state objects is kept on the host too, so the
// state reads as LibTorch's at any time (a step replayed from a captured graph would advance
// only the device counts: such a step must copy them back before the state is saved).
//
// fp16 loss scaling stays Precision's (unscale, overflow check, skip): the fused kernels'
// grad_scale/found_inf arguments are not used, since clipping needs unscaled gradients and the
// skip must be known on the host anyway (skipped-step count, host step counts).
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>
#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/optim/rmsprop.h>
#include <torch/optim/sgd.h>

#include "config/choices.h"
#include "train/lion.h"

namespace plugtrain {

// OptimizerImpl: config/choices.h

const char* to_string(OptimizerImpl impl);

// What optim.impl (`impl`: auto, fused, foreach, loop) gives `optimizer` for `params`: "auto" is
// fused where ATen has a fused kernel for the optimizer (sgd, adam, adamw) on the parameters'
// device (all on one device, of one floating type), foreach otherwise. An explicit "fused"
// without such a kernel is an Error.
OptimizerImpl resolve_optimizer_impl(OptimizerName optimizer, std::optional<OptimizerImpl> impl,
                                     const std::vector<at::Tensor>& params);

// What replaying a recorded optimizer step needs (train/graph_step.h): on a replay the host code
// of step() does not run, so the learning rate is written into the device tensor the kernels
// read before each replay, and the host step counts are advanced after it.
class ReplayableOptimizer {
 public:
  virtual ~ReplayableOptimizer() = default;
  // Each group's learning rate (from its options) into its device tensor; nothing waits.
  virtual void write_lr() = 0;
  // The host step counts: put back after a recording (whose host code counted a step that did
  // not run) and advanced by one after each replay.
  virtual std::vector<std::int64_t> host_steps() const = 0;
  virtual void restore_host_steps(const std::vector<std::int64_t>& steps) = 0;
  // fp16 decided on the device: from now on a step leaves everything as it was when
  // `found_inf` (a float tensor on the device) is non-zero, as PyTorch's fused kernels do with
  // it; the device step counts then stay too, and only sync_host_steps() tells the host.
  virtual void skip_when(at::Tensor found_inf) = 0;
  // The host step counts from the device's (one wait); before a checkpoint is written.
  virtual void sync_host_steps() = 0;
  // Whether a step may be recorded now: every state the kernels read exists (SGD's momentum
  // buffers are made by their first real step, which a recording would repeat).
  virtual bool ready_to_record() const = 0;
  // Grows each time the kernels' lists (and the step-count and learning-rate tensors a
  // recording points at) are built anew: a recording made before must be made again.
  virtual std::int64_t layout() const = 0;
};

// `optimizer` as a ReplayableOptimizer when a recorded step() of it can be replayed: the fused
// forms, whose kernels read the learning rate and step counts from device tensors. Otherwise
// null, and `why_not` says why (foreach and loop forms pass host numbers to every kernel).
ReplayableOptimizer* replayable(torch::optim::Optimizer& optimizer, std::string& why_not);

namespace detail {

// One parameter group's tensors as the multi-tensor kernels take them.
struct GroupLists {
  bool valid = false;
  std::int64_t shape = 0;                 // the options the lists were built for (amsgrad, momentum...)
  std::vector<void*> keys;                // the parameters' TensorImpl, to see whether they changed
  std::vector<at::Tensor> params, grads;  // grads: this step's
  std::vector<std::vector<at::Tensor>> state;  // state[k][i]: state tensor k of params[i]
  std::vector<torch::optim::OptimizerParamState*> states;
  std::vector<bool> fresh;                // sgd: no momentum buffer yet (its first step)
  at::Tensor steps;                       // fused adam: the step counts, float32 on the device
  std::vector<at::Tensor> step_views;     // one 0-dim view of `steps` per parameter
  at::Tensor lr;                          // fused: the learning rate on the device
  double lr_value = std::numeric_limits<double>::quiet_NaN();

  // This step's gradients of `group_params` into `grads`; false when the lists must be built
  // again (the parameters with a gradient changed, or the options' shape did).
  bool gather(const std::vector<at::Tensor>& group_params, std::int64_t options_shape);
  // Starts building: keys, params (those with a gradient) and `slots` empty state lists.
  void reset(const std::vector<at::Tensor>& group_params, std::int64_t options_shape, std::size_t slots);
  // fused: the learning rate tensor holds `lr` (written only when it changed).
  const at::Tensor& lr_tensor(double lr);
};

// The fused CPU kernels walk each tensor's memory in order: `t` laid out as its parameter `p`
// (a copy only when the strides differ), and every gradient of `l` so.
at::Tensor laid_out_as(const at::Tensor& t, const at::Tensor& p);
void lay_out_grads(GroupLists& l);
// The fused kernels' step counts: one float32 per parameter on its device, from the host counts.
void make_step_counts(GroupLists& l, const std::vector<std::int64_t>& counts);

}  // namespace detail

// Adam and AdamW (decoupled weight decay) as one fused kernel or foreach kernels.
template <class Base, class Options, class State, bool kDecoupled>
class MultiTensorAdamT : public Base, public ReplayableOptimizer {
 public:
  MultiTensorAdamT(std::vector<at::Tensor> params, Options options, OptimizerImpl impl);
  at::Tensor step(torch::optim::Optimizer::LossClosure closure = nullptr) override;
  void load(torch::serialize::InputArchive& archive) override;
  OptimizerImpl impl() const { return impl_; }
  void write_lr() override;
  std::vector<std::int64_t> host_steps() const override;
  void restore_host_steps(const std::vector<std::int64_t>& steps) override;
  void skip_when(at::Tensor found_inf) override { found_inf_ = std::move(found_inf); }
  void sync_host_steps() override;
  bool ready_to_record() const override;
  std::int64_t layout() const override { return layout_; }

 private:
  void build(std::size_t g, std::int64_t shape);
  OptimizerImpl impl_;
  std::vector<detail::GroupLists> lists_;
  at::Tensor found_inf_;  // skip_when
  std::int64_t layout_ = 0;
};

using MultiTensorAdam =
    MultiTensorAdamT<torch::optim::Adam, torch::optim::AdamOptions, torch::optim::AdamParamState, false>;
using MultiTensorAdamW =
    MultiTensorAdamT<torch::optim::AdamW, torch::optim::AdamWOptions, torch::optim::AdamWParamState, true>;

// SGD (momentum, dampening, Nesterov, weight decay) as one fused kernel or foreach kernels.
class MultiTensorSGD : public torch::optim::SGD, public ReplayableOptimizer {
 public:
  MultiTensorSGD(std::vector<at::Tensor> params, torch::optim::SGDOptions options, OptimizerImpl impl);
  at::Tensor step(LossClosure closure = nullptr) override;
  void load(torch::serialize::InputArchive& archive) override;
  OptimizerImpl impl() const { return impl_; }
  void write_lr() override;
  std::vector<std::int64_t> host_steps() const override { return {}; }  // SGD keeps no step count
  void restore_host_steps(const std::vector<std::int64_t>&) override {}
  void skip_when(at::Tensor found_inf) override { found_inf_ = std::move(found_inf); }
  void sync_host_steps() override {}
  bool ready_to_record() const override;
  std::int64_t layout() const override { return layout_; }

 private:
  void build(std::size_t g, std::int64_t shape);
  OptimizerImpl impl_;
  std::vector<detail::GroupLists> lists_;
  at::Tensor found_inf_;  // skip_when
  std::int64_t layout_ = 0;
};

// RMSprop (momentum, centered, weight decay) as foreach kernels (ATen has no fused one).
class ForeachRMSprop : public torch::optim::RMSprop {
 public:
  ForeachRMSprop(std::vector<at::Tensor> params, torch::optim::RMSpropOptions options);
  at::Tensor step(LossClosure closure = nullptr) override;
  void load(torch::serialize::InputArchive& archive) override;

 private:
  void build(std::size_t g, std::int64_t shape);
  std::vector<detail::GroupLists> lists_;
};

// Lion as foreach kernels.
class ForeachLion : public Lion {
 public:
  ForeachLion(const std::vector<at::Tensor>& params, LionOptions options);
  at::Tensor step(LossClosure closure = nullptr) override;
  void load(torch::serialize::InputArchive& archive) override;

 private:
  void build(std::size_t g);
  std::vector<detail::GroupLists> lists_;
};

}  // namespace plugtrain
