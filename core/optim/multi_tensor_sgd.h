// SGD (momentum, dampening, Nesterov, weight decay) in every form (optim/multi_tensor_forms.h):
// the state and checkpoints are torch::optim::SGD's, the loop form its arithmetic.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include <ATen/core/Tensor.h>
#include <torch/optim/sgd.h>

#include "optim/multi_tensor_optimizer.h"

namespace plugtrain {

class MultiTensorSGD final : public MultiTensor<torch::optim::SGD> {
 public:
  MultiTensorSGD(std::vector<at::Tensor> params, torch::optim::SGDOptions options, OptimizerImpl impl)
      : MultiTensor(std::move(params), std::move(options), impl) {}

 private:
  std::int64_t state_shape(const Options& options) const override;
  void build_state(GroupLists& l, const Options& options, const OptimizerForm& form) override;
  void update(const ListOps& ops, GroupLists& l, const Options& options) override;
  void fused_update(GroupLists& l, const Options& options, const at::Tensor& lr,
                    const std::optional<at::Tensor>& found_inf) override;

  // The parameters, gradients and momentum buffers of one call, and whether it is their first
  // step (no buffer yet).
  using Part = std::function<void(std::vector<at::Tensor>& params, std::vector<at::Tensor>& grads,
                                  std::vector<at::Tensor>& buffers, bool first_step)>;
  void by_first_step(GroupLists& l, const Part& part);
};

}  // namespace plugtrain
