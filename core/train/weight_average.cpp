#include "train/weight_average.h"

#include <map>

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include "util/error.h"

namespace plugtrain {

WeightAverage::WeightAverage(Model& model, bool with_buffers) {
  at::NoGradGuard no_grad;
  auto add = [&](const std::string& name, const at::Tensor& t) {
    const at::Tensor live = t.detach();
    if (live.is_floating_point()) {
      float_index_.push_back(names_.size());
      model_float_.push_back(live);
      average_float_.push_back(live.clone());
    } else {
      other_index_.push_back(names_.size());
      model_other_.push_back(live);
      average_other_.push_back(live.clone());
    }
    names_.push_back(name);
  };
  for (const auto& p : model.named_parameters()) add(p.key(), p.value());
  if (with_buffers)
    for (const auto& b : model.named_buffers()) add(b.key(), b.value());
}

void WeightAverage::lerp(double weight) {
  at::NoGradGuard no_grad;
  if (!average_float_.empty()) at::_foreach_lerp_(average_float_, model_float_, at::Scalar(weight));
  for (std::size_t i = 0; i < average_other_.size(); ++i) average_other_[i].copy_(model_other_[i]);
}

void WeightAverage::exchange() {
  at::NoGradGuard no_grad;
  auto swap = [](std::vector<at::Tensor>& a, std::vector<at::Tensor>& b) {
    for (std::size_t i = 0; i < a.size(); ++i) {
      const at::Tensor held = a[i].clone();
      a[i].copy_(b[i]);
      b[i].copy_(held);
    }
  };
  swap(model_float_, average_float_);
  swap(model_other_, average_other_);
}

NamedTensors WeightAverage::named_weights() const {
  // Copies (on the CPU, .cpu() would alias the average that the next update changes).
  auto copy = [](const at::Tensor& t) { return t.to(at::kCPU, t.scalar_type(), false, /*copy=*/true); };
  NamedTensors out(names_.size());
  for (std::size_t i = 0; i < float_index_.size(); ++i)
    out[float_index_[i]] = {names_[float_index_[i]], copy(average_float_[i])};
  for (std::size_t i = 0; i < other_index_.size(); ++i)
    out[other_index_[i]] = {names_[other_index_[i]], copy(average_other_[i])};
  return out;
}

void WeightAverage::load(const NamedTensors& weights) {
  at::NoGradGuard no_grad;
  std::map<std::string, at::Tensor> by_name(weights.begin(), weights.end());
  auto restore = [&](const std::vector<std::size_t>& index, std::vector<at::Tensor>& into) {
    for (std::size_t i = 0; i < index.size(); ++i) {
      const std::string& name = names_[index[i]];
      const auto it = by_name.find(name);
      if (it == by_name.end()) throw Error("the averaged weights have no '" + name + "'");
      if (it->second.sizes() != into[i].sizes())
        throw Error("the averaged weight '" + name + "' has another shape than the model's");
      into[i].copy_(it->second);
    }
  };
  restore(float_index_, average_float_);
  restore(other_index_, average_other_);
}

}  // namespace plugtrain
