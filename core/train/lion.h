// Lion (Chen et al. 2023, "Symbolic Discovery of Optimization Algorithms"): LibTorch has no
// implementation, so this is one on LibTorch's Optimizer base, like its own Adam.
//   c = b1*m + (1-b1)*g;  p -= lr * (sign(c) + wd*p);  m = b2*m + (1-b2)*g
#pragma once

#include <tuple>

#include <torch/optim/optimizer.h>
#include <torch/optim/serialize.h>

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

class Lion : public torch::optim::Optimizer {
 public:
  Lion(const std::vector<torch::Tensor>& params, LionOptions defaults);
  torch::Tensor step(LossClosure closure = nullptr) override;
  // Checkpoints: the momentum buffers and group options (LibTorch's base versions save nothing).
  void save(torch::serialize::OutputArchive& archive) const override;
  void load(torch::serialize::InputArchive& archive) override;
};

}  // namespace plugtrain
