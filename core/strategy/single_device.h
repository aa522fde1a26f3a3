// One model on one device in one process: the world of one. Also the base of dp, which is one
// process too.
#pragma once

#include "plugins/model_forward.h"
#include "plugtrain/model.h"
#include "strategy/training_strategy.h"

namespace plugtrain {

class SingleDevice : public TrainingStrategy {
 public:
  explicit SingleDevice(Model& model) : model_(model) {}

  const char* name() const override { return "single"; }
  at::Tensor forward(const at::Tensor& inputs) override { return forward_input(model_, inputs); }
  at::Tensor evaluate(const at::Tensor& inputs) override { return forward_input(model_, inputs); }
  TensorMap forward_fields(const TensorMap& batch) override { return model_.forward_batch(batch); }
  TensorMap evaluate_fields(const TensorMap& batch) override { return model_.forward_batch(batch); }
  void backward(const std::function<void()>& backward) override { backward(); }
  std::vector<double> sum(std::vector<double> values) override { return values; }
  bool stop_question_due(std::int64_t) const override { return true; }
  bool agree_to_stop(bool this_process_wants) override { return this_process_wants; }
  data::Shard shard(bool) const override { return {}; }
  bool is_rank_zero() const override { return true; }
  int processes() const override { return 1; }

 protected:
  Model& model_;
};

}  // namespace plugtrain
