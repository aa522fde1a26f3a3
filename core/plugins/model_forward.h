// The host's call of a model for a batch of one tensor (model.h): a TensorModel's forward, else
// the contract's forward_batch with the batch as "input" and its "output".
#pragma once

#include "plugtrain/model.h"
#include "util/error.h"

namespace plugtrain {

inline at::Tensor forward_input(Model& model, const at::Tensor& input) {
  if (auto* tensor_model = dynamic_cast<TensorModel*>(&model)) return tensor_model->forward(input);
  TensorMap out = model.forward_batch({{"input", input}});
  const auto found = out.find("output");
  if (found == out.end() || !found->second.defined())
    throw Error("the model's forward_batch gave no \"output\" (it gave " + std::to_string(out.size()) + " named outputs)");
  return found->second;
}

}  // namespace plugtrain
