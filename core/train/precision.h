// Mixed precision: autocast for the forward pass, and dynamic loss scaling for fp16 (the
// same rules as PyTorch's torch.autocast and torch.amp.GradScaler), behind one object the
// training step uses (Lightning's Precision plugin).
#pragma once

#include <functional>
#include <string>

#include "checkpoint/state_section.h"
#include "config/choices.h"
#include <vector>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

namespace torch::optim {
class Optimizer;
}

namespace plugtrain {

// "fp32" (no autocast), "bf16", "fp16".
class AutocastScope {
 public:
  AutocastScope(PrecisionMode precision, c10::DeviceType device);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  bool active_ = false;
  c10::DeviceType device_;
  bool previous_enabled_ = false;
  at::ScalarType previous_dtype_ = at::kFloat;
};

// Dynamic loss scaling: the loss is multiplied by `scale` before backward; gradients are
// unscaled before the step; a step whose gradients hold inf/nan is skipped and the scale
// halved; after `growth_interval` good steps the scale doubles.
class LossScaler {
 public:
  LossScaler(bool enabled, c10::Device device, double initial_scale = 65536.0, std::int64_t growth_interval = 2000);
  bool enabled() const { return enabled_; }
  at::Tensor scale(const at::Tensor& loss) const;
  // Unscales the gradients in place; false when any is not finite (skip the step).
  bool unscale(const std::vector<at::Tensor>& parameters);
  // The same without reading the answer: found_inf() is 1 on the device when the step must be
  // skipped (the optimizer skips it there), and the skip is counted on the device too.
  void unscale_on_device(const std::vector<at::Tensor>& parameters);
  const at::Tensor& found_inf() const { return found_inf_; }
  void update();
  double current_scale() const;
  // Steps skipped so far (reads the device's count when skips are decided there).
  std::int64_t skipped_steps() const;
  std::int64_t growth_tracker() const;
  // Back to a checkpointed state, so a resumed fp16 run scales exactly as the original.
  void restore(double scale, std::int64_t growth_tracker, std::int64_t skipped);

 private:
  bool enabled_;
  at::Tensor scale_, growth_tracker_, found_inf_;
  std::int64_t growth_interval_;
  std::int64_t skipped_ = 0;
  at::Tensor skipped_on_device_;  // unscale_on_device's count (float, on the device)
};

class ReplayableOptimizer;

// Scales the gradients so that their joint 2-norm is at most `max_norm`, as PyTorch's
// clip_grad_norm_ (foreach form) does, without reading the norm back: nothing waits for the
// device, so a step that clips can be replayed from a graph.
// `norm`: the whole gradient's norm from these gradients (fsdp's shards: summed over the
// ranks); unset, theirs alone.
using GradientNorm = std::function<at::Tensor(const std::vector<at::Tensor>& gradients)>;
void clip_grad_norm(const std::vector<at::Tensor>& parameters, double max_norm, const GradientNorm& norm = {});

// fp32, bf16 or fp16 for a run on `device`.
class Precision : public Stateful {
 public:
  Precision(PrecisionMode mode, c10::Device device);
  PrecisionMode mode() const { return mode_; }
  // fp16's loss scaling skips a step whose gradients are not finite by itself: the loop neither
  // stops nor skips again for it (train.on_nonfinite applies to fp32 and bf16).
  static bool skips_nonfinite_steps_itself(PrecisionMode mode) { return mode == PrecisionMode::fp16; }

  // The forward pass (and loss) run inside this scope.
  AutocastScope autocast() const { return AutocastScope(mode_, device_.type()); }
  // Backward of the (fp16: scaled) loss.
  void backward(const at::Tensor& loss);
  // Unscales, clips the gradient norm to `grad_clip` (0: off) and steps, unless fp16
  // gradients overflowed: then the step is skipped. Returns whether it stepped (always true
  // once skips are decided on the device: the host does not know).
  bool step(torch::optim::Optimizer& optimizer, const std::vector<at::Tensor>& parameters, double grad_clip,
            const GradientNorm& norm = {});
  // fp16 from now on decides on the device whether a step is skipped (the overflow check is
  // not read back, the optimizer skips by itself): what a step replayed from a graph needs.
  // Nothing changes for fp32 and bf16, which never skip.
  void skip_on_device(ReplayableOptimizer& optimizer);
  // Back to reading the overflow check on the host (after a recording the device refused).
  void skip_on_host(ReplayableOptimizer& optimizer);
  std::int64_t skipped_steps() const { return scaler_.skipped_steps(); }

  // Its section of a checkpoint (fp16: the loss scaler's state; none otherwise), so a resumed
  // fp16 run scales exactly as the original.
  const char* state_name() const override { return "precision"; }
  void save_state(StateSection& out) const override;
  void load_state(const StateSection& in) override;

 private:
  PrecisionMode mode_;
  c10::Device device_;
  LossScaler scaler_;
  bool skips_on_device_ = false;
};

}  // namespace plugtrain
