// RMSprop (momentum, centered, weight decay) in the foreach and loop forms
// (optim/multi_tensor_forms.h; ATen has no fused kernel): the state and checkpoints are
// torch::optim::RMSprop's, the loop form its arithmetic.
#pragma once

#include <vector>

#include <ATen/core/Tensor.h>
#include <torch/optim/rmsprop.h>

#include "optim/multi_tensor_optimizer.h"

namespace plugtrain {

class MultiTensorRMSprop final : public MultiTensor<torch::optim::RMSprop> {
 public:
  MultiTensorRMSprop(std::vector<at::Tensor> params, torch::optim::RMSpropOptions options, OptimizerImpl impl)
      : MultiTensor(std::move(params), std::move(options), impl) {}

 private:
  std::int64_t state_shape(const Options& options) const override;
  void build_state(GroupLists& l, const Options& options, const OptimizerForm& form) override;
  void update(const ListOps& ops, GroupLists& l, const Options& options) override;
};

}  // namespace plugtrain
