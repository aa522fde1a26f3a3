#include "optim/multi_tensor_optimizer.h"

#include <algorithm>

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

namespace plugtrain {

at::Tensor MultiTensorOptimizer::run_step(const torch::optim::Optimizer::LossClosure& closure) {
  at::NoGradGuard no_grad;
  at::Tensor loss;
  if (closure) {
    at::AutoGradMode enable(true);
    loss = closure();
  }
  auto& groups = torch_optimizer().param_groups();
  lists_.resize(groups.size());
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const torch::optim::OptimizerOptions& options = groups[g].options();
    GroupLists& l = lists_[g];
    const std::int64_t shape = state_shape(options);
    if (!l.gather(groups[g].params(), shape)) build(g, shape);
    if (l.params.empty()) continue;
    for (std::int64_t* count : l.counts) ++*count;
    form_.step(*this, l, options, found_inf_);
    l.grads.clear();  // not kept alive into the next forward
  }
  return loss;
}

void MultiTensorOptimizer::build(std::size_t g, std::int64_t shape) {
  auto& group = torch_optimizer().param_groups()[g];
  GroupLists& l = lists_[g];
  // The device's step counts are the true ones when skips are decided there: keep them.
  if (l.steps.defined()) sync_host_steps();
  ++layout_;
  l.reset(group.params(), shape);
  build_state(l, group.options(), form_);
  form_.built(l);
  l.valid = true;
}

void MultiTensorOptimizer::write_lr() {
  auto& groups = torch_optimizer().param_groups();
  for (std::size_t g = 0; g < lists_.size(); ++g)
    if (lists_[g].valid && !lists_[g].params.empty()) lists_[g].lr_tensor(groups[g].options().get_lr());
}

std::vector<std::int64_t> MultiTensorOptimizer::host_steps() const {
  std::vector<std::int64_t> steps;
  for (const auto& l : lists_)
    for (const std::int64_t* count : l.counts) steps.push_back(*count);
  return steps;
}

void MultiTensorOptimizer::restore_host_steps(const std::vector<std::int64_t>& steps) {
  std::size_t i = 0;
  for (auto& l : lists_)
    for (std::int64_t* count : l.counts)
      if (i < steps.size()) *count = steps[i++];
}

void MultiTensorOptimizer::sync_host_steps() {
  for (auto& l : lists_) {
    if (!l.steps.defined()) continue;
    const at::Tensor counts = l.steps.to(at::kCPU);
    for (std::size_t i = 0; i < l.counts.size(); ++i)
      *l.counts[i] = static_cast<std::int64_t>(counts[std::int64_t(i)].item<float>());
  }
}

bool MultiTensorOptimizer::ready_to_record() const {
  return !lists_.empty() && std::all_of(lists_.begin(), lists_.end(), [](const GroupLists& l) {
    return l.valid && std::none_of(l.fresh.begin(), l.fresh.end(), [](bool fresh) { return fresh; });
  });
}

}  // namespace plugtrain
