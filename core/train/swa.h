// Stochastic weight averaging (train.swa_start, train.swa_lr; Izmailov et al. 2018, as
// torch.optim.swa_utils): from epoch swa_start on, the weights at the end of each epoch join an
// equal average (the learning rate held at swa_lr), and the average is what is evaluated — after
// its batch-norm statistics are recomputed over the training set (swa_utils.update_bn), because
// averaged weights make activations whose statistics no trained epoch saw. At the end of the run
// the average becomes the model's weights, so the last checkpoint, export, evaluate and predict
// use it. The average and its count are checkpointed (the "swa" record and section).
#pragma once

#include <cstdint>
#include <vector>

#include <ATen/core/Tensor.h>

#include "checkpoint/state_section.h"
#include "data/batch_loader.h"
#include "train/weight_average.h"

namespace plugtrain {

class StochasticWeightAverage : public Stateful {
 public:
  StochasticWeightAverage(Model& model, std::int64_t start_epoch)
      : average_(model, /*with_buffers=*/false), start_epoch_(start_epoch) {}

  // After epoch `epoch` (1-based): from start_epoch on, its weights join the average.
  void after_epoch(std::int64_t epoch);
  std::int64_t count() const { return count_; }
  WeightAverage& average() { return average_; }

  const char* state_name() const override { return "swa"; }
  void save_state(StateSection& out) const override { out.put_int("count", count_); }
  void load_state(const StateSection& in) override { count_ = in.int_at("count"); }

 private:
  WeightAverage average_;
  std::int64_t start_epoch_;
  std::int64_t count_ = 0;
};

// The model's batch-norm running statistics recomputed as a cumulative average over `batches`
// (forward passes in training mode, no gradients), as swa_utils.update_bn does. Models without
// batch norm are left alone (returns false).
bool recompute_batch_norm(Model& model, data::BatchLoader& batches);

// The model's buffers, kept to be put back after an evaluation that changed them.
class BufferSnapshot {
 public:
  explicit BufferSnapshot(Model& model);
  void restore();

 private:
  std::vector<at::Tensor> live_, kept_;
};

}  // namespace plugtrain
