#include "strategy/ddp_strategy.h"

#include <ATen/ATen.h>

namespace plugtrain {

DdpStrategy::DdpStrategy(Model& model, Collectives& collectives, std::int64_t bucket_bytes)
    : RanksStrategy(collectives), model_(model), bucket_bytes_(bucket_bytes) {}

DdpStrategy::~DdpStrategy() = default;

void DdpStrategy::prepare() {
  collectively("sharing rank 0's weights", [&] {
    sync_ = std::make_unique<GradientSync>(collectives_, model_.parameters(), model_.buffers(), bucket_bytes_);
  });
}

void DdpStrategy::share_buffers_before_forward() {
  if (!sync_) prepare();
  collectively("sharing rank 0's buffers", [&] { sync_->before_forward(); });
}

at::Tensor DdpStrategy::forward(const at::Tensor& inputs) {
  share_buffers_before_forward();
  return forward_input(model_, inputs);
}

TensorMap DdpStrategy::forward_fields(const TensorMap& batch) {
  share_buffers_before_forward();
  return model_.forward_batch(batch);
}

void DdpStrategy::before_evaluation() {
  // Every rank evaluates rank 0's model (batch-norm statistics included).
  if (!sync_) prepare();
  collectively("sharing rank 0's buffers", [&] { sync_->share_buffers(); });
}

void DdpStrategy::backward(const std::function<void()>& backward) {
  if (!sync_) prepare();
  sync_->before_backward();
  // In backward the reducer's all-reduce is the only part that waits on the other ranks.
  collectively("gradient all-reduce", backward);
}

void DdpStrategy::before_unsynced_forward() { share_buffers_before_forward(); }

void DdpStrategy::average_gradients(const std::vector<at::Tensor>& parameters) {
  std::vector<at::Tensor> grads, flat;
  for (const auto& p : parameters)
    if (p.grad().defined()) {
      grads.push_back(p.grad());
      flat.push_back(p.grad().reshape(-1));
    }
  if (grads.empty()) return;
  std::vector<at::Tensor> all{at::cat(flat)};
  collectively("gradient all-reduce", [&] { collectives_.all_reduce_sum(all); });
  all[0].div_(collectives_.size());
  std::int64_t offset = 0;
  for (auto& g : grads) {
    g.copy_(all[0].narrow(0, offset, g.numel()).view(g.sizes()));
    offset += g.numel();
  }
}

}  // namespace plugtrain
