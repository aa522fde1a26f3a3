#include "plugins/model_forward.h"
#include "train/swa.h"

#include <optional>

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>
#include <torch/nn/modules/batchnorm.h>

namespace plugtrain {

void StochasticWeightAverage::after_epoch(std::int64_t epoch) {
  if (epoch < start_epoch_) return;
  ++count_;
  average_.lerp(1.0 / double(count_));  // the n-th weights weigh 1/n: an equal average (the first is a copy)
}

namespace {

// A batch-norm layer's options, whatever its dimensions.
torch::nn::BatchNormOptions* batch_norm_options(const std::shared_ptr<torch::nn::Module>& m) {
  if (auto bn = std::dynamic_pointer_cast<torch::nn::BatchNorm1dImpl>(m)) return &bn->options;
  if (auto bn = std::dynamic_pointer_cast<torch::nn::BatchNorm2dImpl>(m)) return &bn->options;
  if (auto bn = std::dynamic_pointer_cast<torch::nn::BatchNorm3dImpl>(m)) return &bn->options;
  return nullptr;
}

void reset_running_stats(const std::shared_ptr<torch::nn::Module>& m) {
  if (auto bn = std::dynamic_pointer_cast<torch::nn::BatchNorm1dImpl>(m)) bn->reset_running_stats();
  if (auto bn = std::dynamic_pointer_cast<torch::nn::BatchNorm2dImpl>(m)) bn->reset_running_stats();
  if (auto bn = std::dynamic_pointer_cast<torch::nn::BatchNorm3dImpl>(m)) bn->reset_running_stats();
}

}  // namespace

bool recompute_batch_norm(Model& model, data::BatchLoader& batches) {
  std::vector<std::pair<torch::nn::BatchNormOptions*, std::optional<double>>> layers;
  for (const auto& m : model.modules(/*include_self=*/false))
    if (torch::nn::BatchNormOptions* options = batch_norm_options(m)) {
      if (!options->track_running_stats()) continue;
      reset_running_stats(m);
      layers.emplace_back(options, options->momentum());
      options->momentum(std::nullopt);  // a cumulative average over every batch
    }
  if (layers.empty()) return false;
  at::NoGradGuard no_grad;
  const bool was_training = model.is_training();
  model.train();
  batches.start_epoch(0);
  while (auto batch = batches.next()) {
    if (batch->fields.empty()) {
      forward_input(model, batch->inputs);
    } else {
      TensorMap inputs(batch->fields.begin(), batch->fields.end());
      inputs["input"] = batch->inputs;
      model.forward_batch(inputs);
    }
  }
  for (auto& [options, momentum] : layers) options->momentum(momentum);
  model.train(was_training);
  return true;
}

BufferSnapshot::BufferSnapshot(Model& model) {
  for (const auto& b : model.buffers()) {
    live_.push_back(b);
    kept_.push_back(b.detach().clone());
  }
}

void BufferSnapshot::restore() {
  at::NoGradGuard no_grad;
  for (std::size_t i = 0; i < live_.size(); ++i) live_[i].copy_(kept_[i]);
}

}  // namespace plugtrain
