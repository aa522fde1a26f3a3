// The tensors of one parameter's optimizer state, visited field by field for the state classes
// of plugtrain's optimizer table (Adam's and AdamW's exp_avg, exp_avg_sq, max_exp_avg_sq; SGD's
// momentum_buffer; RMSprop's square_avg, momentum_buffer, grad_avg; Lion's exp_avg): moved to
// the host for a checkpoint, flattened into fsdp's shards and back. Another state class has
// none to visit.
#pragma once

#include <functional>
#include <string>

#include <ATen/core/Tensor.h>
#include <torch/optim/optimizer.h>

namespace plugtrain {

// `visit(name, field, set)`: the field's name ("exp_avg"), its tensor (undefined where the
// state has none), and a setter that replaces it.
using StateTensorVisitor = std::function<void(const std::string& name, const at::Tensor& field,
                                              const std::function<void(const at::Tensor&)>& set)>;
void for_each_state_tensor(torch::optim::OptimizerParamState& state, const StateTensorVisitor& visit);

}  // namespace plugtrain
