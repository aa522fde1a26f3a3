// The fused form (optim.impl = "fused"): which optimizers and parameters have one
// (resolve_optimizer_impl, over the optimizer table's fused kernels), and what it offers a
// recorded step (ReplayableOptimizer, replayable). The forms themselves are
// optim/multi_tensor_forms.h; the optimizers optim/multi_tensor_optimizer.h and its subclasses.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <torch/optim/optimizer.h>

#include "config/choices.h"
#include "util/result.h"

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
// why not (foreach and loop forms pass host numbers to every kernel).
Result<ReplayableOptimizer*> replayable(torch::optim::Optimizer& optimizer);

// What the plan knows before the model exists: whether optim.name and optim.impl make a
// replayable optimizer for float32 parameters on `device` (the fused form, with ATen's kernel
// there); if not, why. A model whose parameters are of mixed types or devices still gets the
// foreach form (resolve_optimizer_impl), which the first step then finds (Trainer::make_step).
Status replayable_on(OptimizerName optimizer, std::optional<OptimizerImpl> impl, c10::Device device);

}  // namespace plugtrain
