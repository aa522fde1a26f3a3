// A running average of a model's weights, kept beside them on the device: the EMA of the
// weights (train/model_ema.h) and stochastic weight averaging (train/swa.h) are two rules for
// its weight. Updating is one foreach lerp over every averaged tensor (one multi-tensor kernel
// on a GPU); integer buffers, where they are averaged at all, are copied.
//
// Evaluation can run on the average: swap_in() exchanges it with the model's weights in place
// (the tensors keep their storage, so recorded graphs stay valid) and swap_out() puts the
// trained ones back. Checkpoints keep it by the model's state_dict names.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <ATen/core/Tensor.h>

#include "plugtrain/model.h"

namespace plugtrain {

using NamedTensors = std::vector<std::pair<std::string, at::Tensor>>;

class WeightAverage {
 public:
  // `with_buffers`: batch-norm statistics too (the EMA); SWA averages parameters only.
  WeightAverage(Model& model, bool with_buffers);

  // average += weight * (model - average); weight 1 copies the model.
  void lerp(double weight);
  void reset() { lerp(1.0); }
  void swap_in() { exchange(); }
  void swap_out() { exchange(); }

  NamedTensors named_weights() const;  // CPU copies
  // Throws Error naming a missing or mis-shaped tensor.
  void load(const NamedTensors& weights);

 private:
  void exchange();

  std::vector<std::string> names_;
  std::vector<at::Tensor> model_float_, average_float_;  // floating tensors (lerped)
  std::vector<at::Tensor> model_other_, average_other_;  // integer buffers (copied)
  std::vector<std::size_t> float_index_, other_index_;   // the position of each in names_
};

}  // namespace plugtrain
