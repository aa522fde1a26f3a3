// ddp: one process per device (PyTorch's DistributedDataParallel recipe on c10d), each holding
// the whole model, its gradients and its optimizer state.
#pragma once

#include <memory>

#include "distributed/collectives.h"
#include "distributed/gradient_sync.h"
#include "plugins/model_forward.h"
#include "plugtrain/model.h"
#include "strategy/ranks_strategy.h"

namespace plugtrain {

class DdpStrategy final : public RanksStrategy {
 public:
  DdpStrategy(Model& model, Collectives& collectives, std::int64_t bucket_bytes);
  ~DdpStrategy() override;

  const char* name() const override { return "ddp"; }
  void prepare() override;
  at::Tensor forward(const at::Tensor& inputs) override;
  at::Tensor evaluate(const at::Tensor& inputs) override { return forward_input(model_, inputs); }
  TensorMap forward_fields(const TensorMap& batch) override;
  TensorMap evaluate_fields(const TensorMap& batch) override { return model_.forward_batch(batch); }
  void before_evaluation() override;
  void backward(const std::function<void()>& backward) override;
  // The recorded-step parts: the model alone (its reducer not armed, so backward syncs nothing),
  // rank 0's buffers before it, and one all-reduce of every gradient after it.
  at::Tensor model_forward(const at::Tensor& inputs) override { return forward_input(model_, inputs); }
  void before_unsynced_forward() override;
  void average_gradients(const std::vector<at::Tensor>& parameters) override;

 private:
  // Rank 0's buffers to every rank before a forward pass (with the gradient hooks set up first).
  void share_buffers_before_forward();

  Model& model_;
  std::int64_t bucket_bytes_;
  std::unique_ptr<GradientSync> sync_;
};

}  // namespace plugtrain
