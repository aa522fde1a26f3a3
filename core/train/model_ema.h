// An exponential moving average of the model's weights (train.ema_decay), as timm's ModelEmaV3:
// after every optimizer step, ema = decay * ema + (1 - decay) * weights for every floating
// parameter and buffer (batch-norm statistics included; integer buffers are copied). With
// warm-up, step t's decay is min(decay, 1 - (1 + t)^(-2/3)), so the average follows the fast
// early weights instead of remembering the random start. The update is one foreach lerp (one
// multi-tensor kernel on a GPU) over all tensors.
//
// Evaluation can run on the averaged weights: swap_in() exchanges them with the model's in
// place (the tensors keep their storage, so recorded graphs stay valid) and swap_out() puts the
// trained ones back. The averaged weights are saved in checkpoints beside the model's, by the
// same state_dict names, and `plugtrain export --ema` exports them.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <ATen/core/Tensor.h>

#include "plugtrain/model.h"

namespace plugtrain {

class ModelEma {
 public:
  ModelEma(Model& model, double decay, bool warmup);

  // After optimizer step `step` (1-based, the run's).
  void update(std::int64_t step);
  // The decay used after step `step`.
  double decay_at(std::int64_t step) const;

  // The average starts again from the model's weights (a resume from a checkpoint without one).
  void reset();

  void swap_in();
  void swap_out();

  // The averaged weights by state_dict names (CPU copies), and back from a checkpoint.
  std::vector<std::pair<std::string, at::Tensor>> named_weights() const;
  void load(const std::vector<std::pair<std::string, at::Tensor>>& weights);

 private:
  void exchange();

  double decay_;
  bool warmup_;
  std::vector<std::string> names_;
  std::vector<at::Tensor> model_float_, ema_float_;  // floating parameters and buffers
  std::vector<at::Tensor> model_other_, ema_other_;  // integer buffers (copied)
  std::vector<std::size_t> float_index_, other_index_;  // position of each in names_
};

}  // namespace plugtrain
