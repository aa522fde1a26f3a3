#include "strategy/training_strategy.h"

#include <ATen/ATen.h>

#include "util/error.h"
#include "util/format.h"

namespace plugtrain {

TensorMap TrainingStrategy::outputs(const data::Batch& batch, bool training, at::Tensor& output) {
  TensorMap named = batch.fields;
  named["input"] = batch.inputs;
  TensorMap out = training ? forward_fields(named) : evaluate_fields(named);
  const auto found = out.find("output");
  if (found == out.end() || !found->second.defined())
    throw Error("the model's forward_batch gave no \"output\" (it gave " + std::to_string(out.size()) +
                " named outputs): return forward's scores under that name");
  output = found->second;
  out.erase(found);
  if (const auto lengths = out.find("output_lengths"); lengths != out.end()) {
    const at::Tensor& l = lengths->second;
    if (!l.defined() || l.dim() != 1 || l.size(0) != batch.inputs.size(0) || at::isFloatingType(l.scalar_type()))
      throw Error("the model's forward_batch gave output_lengths " + (l.defined() ? shape_text(l.sizes()) : std::string("undefined")) +
                  " for a batch of " + std::to_string(batch.inputs.size(0)) + " (integers, one per sample)");
  }
  return out;
}

SteppedParameters TrainingStrategy::stepped_parameters(const std::vector<at::Tensor>& model_parameters) const {
  SteppedParameters stepped{model_parameters, {}};
  for (const at::Tensor& p : model_parameters) stepped.matrices.push_back(p.dim() >= 2);
  return stepped;
}

at::Tensor TrainingStrategy::gradient_norm(const std::vector<at::Tensor>& gradients) {
  const std::vector<at::Tensor> norms = at::_foreach_norm(gradients, 2);
  return at::linalg_vector_norm(at::stack(norms), 2);
}

}  // namespace plugtrain
