// ddp: one process per device (PyTorch's DistributedDataParallel recipe on c10d). Every
// failure that involves the other processes leaves here as a CollectiveError, so the run
// recognises it by its type and asks the rendezvous store which rank is at fault.
#pragma once

#include <memory>

#include "distributed/collectives.h"
#include "distributed/gradient_sync.h"
#include "plugins/model_forward.h"
#include "plugtrain/model.h"
#include "strategy/training_strategy.h"

namespace plugtrain {

class DdpStrategy final : public TrainingStrategy {
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
  std::vector<double> sum(std::vector<double> values) override;
  // Asking is a round trip: every 8th step of the run (short epochs are covered too), and at
  // every epoch's end.
  bool stop_question_due(std::int64_t step) const override { return step % 8 == 0; }
  bool agree_to_stop(bool this_process_wants) override;
  void note_step(std::int64_t step) override;
  data::Shard shard(bool pad) const override { return {collectives_.rank(), collectives_.size(), pad}; }
  bool is_rank_zero() const override { return collectives_.rank() == 0; }
  int processes() const override { return collectives_.size(); }

 private:
  // Rank 0's buffers to every rank before a forward pass (with the gradient hooks set up first).
  void share_buffers_before_forward();

  Model& model_;
  Collectives& collectives_;
  std::int64_t bucket_bytes_;
  std::unique_ptr<GradientSync> sync_;
};

}  // namespace plugtrain
