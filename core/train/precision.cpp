#include "train/precision.h"

#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>
#include <torch/optim/optimizer.h>

#include "checkpoint/checkpoint.h"
#include "optim/fused_optimizers.h"

namespace plugtrain {

AutocastScope::AutocastScope(PrecisionMode precision, c10::DeviceType device) : device_(device) {
  if (precision == PrecisionMode::fp32) return;
  active_ = true;
  previous_enabled_ = at::autocast::is_autocast_enabled(device);
  previous_dtype_ = at::autocast::get_autocast_dtype(device);
  at::autocast::set_autocast_enabled(device, true);
  at::autocast::set_autocast_dtype(device, precision == PrecisionMode::bf16 ? at::kBFloat16 : at::kHalf);
  at::autocast::increment_nesting();
}

AutocastScope::~AutocastScope() {
  if (!active_) return;
  // Like torch.autocast's __exit__: the cast-weight cache lives for one outermost region.
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  at::autocast::set_autocast_enabled(device_, previous_enabled_);
  at::autocast::set_autocast_dtype(device_, previous_dtype_);
}

LossScaler::LossScaler(bool enabled, c10::Device device, double initial_scale, std::int64_t growth_interval)
    : enabled_(enabled), growth_interval_(growth_interval) {
  if (!enabled_) return;
  const auto f32 = at::TensorOptions().dtype(at::kFloat).device(device);
  scale_ = at::full({}, initial_scale, f32);
  growth_tracker_ = at::zeros({}, at::TensorOptions().dtype(at::kInt).device(device));
  found_inf_ = at::zeros({}, f32);
  // Made here, not on first use: a first use inside a recording would record its zero-fill too.
  skipped_on_device_ = at::zeros({}, f32);
}

at::Tensor LossScaler::scale(const at::Tensor& loss) const { return enabled_ ? loss * scale_ : loss; }

bool LossScaler::unscale(const std::vector<at::Tensor>& parameters) {
  if (!enabled_) return true;
  std::vector<at::Tensor> grads;
  for (const auto& p : parameters)
    if (p.grad().defined()) grads.push_back(p.grad());
  found_inf_.zero_();
  at::_amp_foreach_non_finite_check_and_unscale_(grads, found_inf_, scale_.reciprocal());
  const bool finite = found_inf_.item<float>() == 0.0f;  // the one sync per step, as in GradScaler
  if (!finite) ++skipped_;
  return finite;
}

void LossScaler::unscale_on_device(const std::vector<at::Tensor>& parameters) {
  if (!enabled_) return;
  std::vector<at::Tensor> grads;
  for (const auto& p : parameters)
    if (p.grad().defined()) grads.push_back(p.grad());
  found_inf_.zero_();
  at::_amp_foreach_non_finite_check_and_unscale_(grads, found_inf_, scale_.reciprocal());
  skipped_on_device_.add_(found_inf_);
}

void LossScaler::update() {
  if (!enabled_) return;
  at::_amp_update_scale_(scale_, growth_tracker_, found_inf_, 2.0, 0.5, growth_interval_);
}

std::int64_t LossScaler::skipped_steps() const {
  if (!enabled_) return skipped_;
  return skipped_ + static_cast<std::int64_t>(std::llround(skipped_on_device_.item<double>()));
}

double LossScaler::current_scale() const { return enabled_ ? scale_.item<double>() : 1.0; }

std::int64_t LossScaler::growth_tracker() const { return enabled_ ? growth_tracker_.item<std::int64_t>() : 0; }

void LossScaler::restore(double scale, std::int64_t growth_tracker, std::int64_t skipped) {
  if (!enabled_) return;
  scale_.fill_(scale);
  growth_tracker_.fill_(growth_tracker);
  skipped_ = skipped;
  skipped_on_device_.zero_();
}

void clip_grad_norm(const std::vector<at::Tensor>& parameters, double max_norm, const GradientNorm& norm) {
  std::vector<at::Tensor> grads;
  for (const auto& p : parameters)
    if (p.grad().defined()) grads.push_back(p.grad());
  if (grads.empty()) return;
  at::Tensor total;
  if (norm) {
    total = norm(grads);
  } else {
    const std::vector<at::Tensor> norms = at::_foreach_norm(grads, 2);
    total = at::linalg_vector_norm(at::stack(norms), 2);
  }
  const at::Tensor coefficient = at::clamp_max((total + 1e-6).reciprocal() * max_norm, 1.0);
  at::_foreach_mul_(grads, coefficient);
}

Precision::Precision(PrecisionMode mode, c10::Device device)
    : mode_(mode), device_(device), scaler_(mode == PrecisionMode::fp16, device) {}

void Precision::backward(const at::Tensor& loss) { scaler_.scale(loss).backward(); }

bool Precision::step(torch::optim::Optimizer& optimizer, const std::vector<at::Tensor>& parameters, double grad_clip,
                     const GradientNorm& norm) {
  if (skips_on_device_) {
    scaler_.unscale_on_device(parameters);
    if (grad_clip > 0) clip_grad_norm(parameters, grad_clip, norm);  // a skipped step's (inf) gradients are not used
    optimizer.step();                                         // skips by itself where found_inf is set
    scaler_.update();
    return true;
  }
  const bool finite = scaler_.unscale(parameters);  // false: fp16 gradients overflowed
  if (finite) {
    if (grad_clip > 0) clip_grad_norm(parameters, grad_clip, norm);
    optimizer.step();
  }
  scaler_.update();
  return finite;
}

void Precision::skip_on_device(ReplayableOptimizer& optimizer) {
  if (!scaler_.enabled() || skips_on_device_) return;
  optimizer.skip_when(scaler_.found_inf());
  skips_on_device_ = true;
}

void Precision::skip_on_host(ReplayableOptimizer& optimizer) {
  if (!skips_on_device_) return;
  optimizer.skip_when(at::Tensor());
  skips_on_device_ = false;
}

void Precision::save_state(StateSection& out) const {
  if (!scaler_.enabled()) return;
  out.put_real("loss_scale", scaler_.current_scale());
  out.put_int("growth_tracker", scaler_.growth_tracker());
  out.put_int("skipped_steps", scaler_.skipped_steps());
}

void Precision::load_state(const StateSection& in) {
  scaler_.restore(in.real_at("loss_scale"), in.int_at("growth_tracker"), in.int_at("skipped_steps"));
}

}  // namespace plugtrain
