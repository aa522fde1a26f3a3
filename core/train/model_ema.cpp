#include "train/model_ema.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include "util/error.h"

namespace plugtrain {

ModelEma::ModelEma(Model& model, double decay, bool warmup) : decay_(decay), warmup_(warmup) {
  at::NoGradGuard no_grad;
  auto add = [&](const std::string& name, const at::Tensor& t) {
    const at::Tensor live = t.detach();
    if (live.is_floating_point()) {
      float_index_.push_back(names_.size());
      model_float_.push_back(live);
      ema_float_.push_back(live.clone());
    } else {
      other_index_.push_back(names_.size());
      model_other_.push_back(live);
      ema_other_.push_back(live.clone());
    }
    names_.push_back(name);
  };
  for (const auto& p : model.named_parameters()) add(p.key(), p.value());
  for (const auto& b : model.named_buffers()) add(b.key(), b.value());
}

double ModelEma::decay_at(std::int64_t step) const {
  if (!warmup_) return decay_;
  // timm ModelEmaV3.get_decay: step - 1, gamma 1, power 2/3; 0 before the first update.
  const double t = double(std::max<std::int64_t>(0, step - 1));
  if (t <= 0) return 0.0;
  return std::clamp(1.0 - std::pow(1.0 + t, -2.0 / 3.0), 0.0, decay_);
}

void ModelEma::update(std::int64_t step) {
  at::NoGradGuard no_grad;
  const double decay = decay_at(step);
  if (!ema_float_.empty()) at::_foreach_lerp_(ema_float_, model_float_, at::Scalar(1.0 - decay));
  for (std::size_t i = 0; i < ema_other_.size(); ++i) ema_other_[i].copy_(model_other_[i]);
}

void ModelEma::exchange() {
  at::NoGradGuard no_grad;
  auto swap = [](std::vector<at::Tensor>& a, std::vector<at::Tensor>& b) {
    for (std::size_t i = 0; i < a.size(); ++i) {
      const at::Tensor held = a[i].clone();
      a[i].copy_(b[i]);
      b[i].copy_(held);
    }
  };
  swap(model_float_, ema_float_);
  swap(model_other_, ema_other_);
}

void ModelEma::reset() {
  at::NoGradGuard no_grad;
  for (std::size_t i = 0; i < ema_float_.size(); ++i) ema_float_[i].copy_(model_float_[i]);
  for (std::size_t i = 0; i < ema_other_.size(); ++i) ema_other_[i].copy_(model_other_[i]);
}

void ModelEma::swap_in() { exchange(); }
void ModelEma::swap_out() { exchange(); }

std::vector<std::pair<std::string, at::Tensor>> ModelEma::named_weights() const {
  // Copies (on the CPU, .cpu() would alias the average that the next update changes).
  auto copy = [](const at::Tensor& t) { return t.to(at::kCPU, t.scalar_type(), false, /*copy=*/true); };
  std::vector<std::pair<std::string, at::Tensor>> out(names_.size());
  for (std::size_t i = 0; i < float_index_.size(); ++i)
    out[float_index_[i]] = {names_[float_index_[i]], copy(ema_float_[i])};
  for (std::size_t i = 0; i < other_index_.size(); ++i)
    out[other_index_[i]] = {names_[other_index_[i]], copy(ema_other_[i])};
  return out;
}

void ModelEma::load(const std::vector<std::pair<std::string, at::Tensor>>& weights) {
  at::NoGradGuard no_grad;
  std::map<std::string, at::Tensor> by_name(weights.begin(), weights.end());
  auto restore = [&](const std::vector<std::size_t>& index, std::vector<at::Tensor>& into) {
    for (std::size_t i = 0; i < index.size(); ++i) {
      const std::string& name = names_[index[i]];
      const auto it = by_name.find(name);
      if (it == by_name.end()) throw Error("the checkpoint's EMA weights have no '" + name + "'");
      if (it->second.sizes() != into[i].sizes())
        throw Error("the checkpoint's EMA weight '" + name + "' has another shape than the model's");
      into[i].copy_(it->second);
    }
  };
  restore(float_index_, ema_float_);
  restore(other_index_, ema_other_);
}

}  // namespace plugtrain
