#include "optim/optimizers.h"

#include <cmath>

#include "optim/fused_optimizers.h"
#include "optim/lion.h"
#include "optim/multi_tensor_adam.h"
#include "optim/multi_tensor_rmsprop.h"
#include "optim/multi_tensor_sgd.h"
#include "util/error.h"

namespace plugtrain {

namespace {

std::tuple<double, double> betas_or(const Experiment& e, double b1, double b2) {
  if (e.optim.betas.size() == 2) return {e.optim.betas[0], e.optim.betas[1]};
  return {b1, b2};
}

// A second parameter group, like the first but without weight decay.
template <class Options>
void add_undecayed_group(torch::optim::Optimizer& optimizer, std::vector<at::Tensor> params) {
  auto options = std::make_unique<Options>(static_cast<const Options&>(optimizer.defaults()));
  options->weight_decay(0);
  optimizer.add_param_group(torch::optim::OptimizerParamGroup(std::move(params), std::move(options)));
}

std::unique_ptr<torch::optim::Optimizer> make_one_group(const Experiment& e, double lr,
                                                        const std::vector<at::Tensor>& params, OptimizerImpl impl);

}  // namespace

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const Experiment& e, double lr,
                                                        const std::vector<at::Tensor>& params,
                                                        const std::vector<bool>& matrices) {
  const OptimizerImpl impl = resolve_optimizer_impl(e.optim.name, e.optim.impl, params);
  if (e.optim.decay == DecayScope::all || e.optim.weight_decay == 0) return make_one_group(e, lr, params, impl);
  // optim.decay = "matrices": group 0 decays the parameters of two or more dimensions, group 1
  // holds the rest (biases, norm scales) without decay: nanoGPT's configure_optimizers.
  std::vector<at::Tensor> decayed, kept;
  for (std::size_t i = 0; i < params.size(); ++i) {
    const bool matrix = matrices.empty() ? params[i].dim() >= 2 : bool(matrices[i]);
    (matrix ? decayed : kept).push_back(params[i]);
  }
  std::unique_ptr<torch::optim::Optimizer> optimizer = make_one_group(e, lr, decayed, impl);
  switch (e.optim.name) {
    case OptimizerName::sgd: add_undecayed_group<torch::optim::SGDOptions>(*optimizer, kept); break;
    case OptimizerName::adam: add_undecayed_group<torch::optim::AdamOptions>(*optimizer, kept); break;
    case OptimizerName::adamw: add_undecayed_group<torch::optim::AdamWOptions>(*optimizer, kept); break;
    case OptimizerName::rmsprop: add_undecayed_group<torch::optim::RMSpropOptions>(*optimizer, kept); break;
    case OptimizerName::lion: add_undecayed_group<LionOptions>(*optimizer, kept); break;
  }
  return optimizer;
}

namespace {

std::unique_ptr<torch::optim::Optimizer> make_one_group(const Experiment& e, double lr,
                                                        const std::vector<at::Tensor>& params, OptimizerImpl impl) {
  const double wd = e.optim.weight_decay;
  switch (e.optim.name) {
    case OptimizerName::sgd:
      return std::make_unique<MultiTensorSGD>(
          params, torch::optim::SGDOptions(lr).momentum(e.optim.momentum).nesterov(e.optim.nesterov).weight_decay(wd),
          impl);
    case OptimizerName::adam:
      return std::make_unique<MultiTensorAdam>(
          params, torch::optim::AdamOptions(lr).betas(betas_or(e, 0.9, 0.999)).eps(e.optim.eps).weight_decay(wd), impl);
    case OptimizerName::adamw:
      return std::make_unique<MultiTensorAdamW>(
          params, torch::optim::AdamWOptions(lr).betas(betas_or(e, 0.9, 0.999)).eps(e.optim.eps).weight_decay(wd),
          impl);
    case OptimizerName::rmsprop:
      return std::make_unique<MultiTensorRMSprop>(params,
                                                  torch::optim::RMSpropOptions(lr)
                                                      .alpha(e.optim.alpha)
                                                      .eps(e.optim.eps)
                                                      .weight_decay(wd)
                                                      .momentum(e.optim.momentum),
                                                  impl);
    case OptimizerName::lion:
      return std::make_unique<MultiTensorLion>(params, LionOptions(lr).betas(betas_or(e, 0.9, 0.99)).weight_decay(wd),
                                               impl);
  }
  throw Error(std::string("unknown optimizer '") + word_of(e.optim.name) + "'");
}

}  // namespace

double lr_scaling_factor(LrScaling rule, double k) {
  return rule == LrScaling::linear ? k : rule == LrScaling::sqrt ? std::sqrt(k) : 1.0;
}

void set_lr(torch::optim::Optimizer& optimizer, double lr) {
  for (auto& group : optimizer.param_groups()) group.options().set_lr(lr);
}

}  // namespace plugtrain
