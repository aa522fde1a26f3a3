// Activation checkpointing (train.activation_checkpointing = "blocks"): a unit's forward keeps
// only its input; backward runs the unit again, with the random state and autocast it first
// ran with, and takes the gradients from that second run. Dropout draws the same numbers both
// times, so the step's arithmetic, and its losses, are those of a run without it, bit for bit.
// It is torch.utils.checkpoint's reentrant form, for the units a model declares
// (plugtrain/units.h).
#pragma once

#include <ATen/core/Tensor.h>

#include "plugtrain/units.h"

namespace plugtrain {

// `forward(input)` computed without keeping its intermediate tensors, recomputed in backward.
// Where autograd is off (evaluation), simply `forward(input)`.
at::Tensor run_checkpointed(const at::Tensor& input, const UnitForward& forward);

// The runner a single-device, dp or ddp run sets on a model's units when checkpointing.
class CheckpointingRunner final : public UnitRunner {
 public:
  at::Tensor run(std::size_t, const at::Tensor& input, const UnitForward& forward) override {
    return run_checkpointed(input, forward);
  }
};

}  // namespace plugtrain
