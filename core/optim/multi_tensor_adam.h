// Adam and AdamW (decoupled weight decay), in every form (optim/multi_tensor_forms.h): the state
// and checkpoints are torch::optim::Adam's and AdamW's, the loop form their arithmetic.
#pragma once

#include <optional>
#include <vector>

#include <ATen/core/Tensor.h>
#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>

#include "optim/multi_tensor_optimizer.h"

namespace plugtrain {

template <class Torch, class Options, class State, bool kDecoupled>
class MultiTensorAdamT final : public MultiTensor<Torch> {
 public:
  MultiTensorAdamT(std::vector<at::Tensor> params, Options options, OptimizerImpl impl)
      : MultiTensor<Torch>(std::move(params), std::move(options), impl) {}

 private:
  using AnyOptions = MultiTensorAlgorithm::Options;
  std::int64_t state_shape(const AnyOptions& options) const override;
  void build_state(GroupLists& l, const AnyOptions& options, const OptimizerForm& form) override;
  void update(const ListOps& ops, GroupLists& l, const AnyOptions& options) override;
  void fused_update(GroupLists& l, const AnyOptions& options, const at::Tensor& lr,
                    const std::optional<at::Tensor>& found_inf) override;
};

using MultiTensorAdam =
    MultiTensorAdamT<torch::optim::Adam, torch::optim::AdamOptions, torch::optim::AdamParamState, false>;
using MultiTensorAdamW =
    MultiTensorAdamT<torch::optim::AdamW, torch::optim::AdamWOptions, torch::optim::AdamWParamState, true>;

}  // namespace plugtrain
