// Lion (Chen et al. 2023, "Symbolic Discovery of Optimization Algorithms"):
//   c = b1*m + (1-b1)*g;  p -= lr * (sign(c) + wd*p);  m = b2*m + (1-b2)*g
// LibTorch has none, so `Lion` is one in LibTorch's shape, as torch::optim::Adam is: its options,
// its per-parameter state and their checkpoint format. MultiTensorLion steps it in the foreach
// and loop forms (optim/multi_tensor_forms.h; ATen has no fused kernel).
#pragma once

#include <tuple>
#include <vector>

#include <torch/optim/optimizer.h>
#include <torch/optim/serialize.h>

#include "optim/multi_tensor_optimizer.h"

namespace plugtrain {

struct LionOptions : public torch::optim::OptimizerCloneableOptions<LionOptions> {
  LionOptions(double lr = 1e-4) : lr_(lr) {}
  TORCH_ARG(double, lr);
  typedef std::tuple<double, double> betas_t;
  TORCH_ARG(betas_t, betas) = std::make_tuple(0.9, 0.99);
  TORCH_ARG(double, weight_decay) = 0;

 public:  // TORCH_ARG leaves the section private
  double get_lr() const override { return lr(); }
  void set_lr(const double lr) override { this->lr(lr); }
  void serialize(torch::serialize::InputArchive& archive) override;
  void serialize(torch::serialize::OutputArchive& archive) const override;
};

struct LionParamState : public torch::optim::OptimizerCloneableParamState<LionParamState> {
  TORCH_ARG(torch::Tensor, exp_avg);

 public:
  void serialize(torch::serialize::InputArchive& archive) override;
  void serialize(torch::serialize::OutputArchive& archive) const override;
};

// The options and the state, saved and loaded (LibTorch's base versions save nothing); step()
// is MultiTensorLion's.
class Lion : public torch::optim::Optimizer {
 public:
  Lion(const std::vector<torch::Tensor>& params, LionOptions defaults);
  void save(torch::serialize::OutputArchive& archive) const override;
  void load(torch::serialize::InputArchive& archive) override;
};

class MultiTensorLion final : public MultiTensor<Lion> {
 public:
  MultiTensorLion(std::vector<at::Tensor> params, LionOptions options, OptimizerImpl impl)
      : MultiTensor(std::move(params), std::move(options), impl) {}

 private:
  std::int64_t state_shape(const Options&) const override { return 0; }
  void build_state(GroupLists& l, const Options& options, const OptimizerForm& form) override;
  void update(const ListOps& ops, GroupLists& l, const Options& options) override;
};

}  // namespace plugtrain
