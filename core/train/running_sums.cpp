#include "train/running_sums.h"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include "strategy/training_strategy.h"
#include "train/train_step.h"

namespace plugtrain {

RunningSums::RunningSums(const Task& task, const DeviceContext& device, const EpochSums& carried, bool carries_them,
                         bool accumulates, SumTensors& tensors)
    : task_(task),
      statistics_size_(task.statistics_size(TaskPass::training)),
      loss_sum_(tensors.loss_sum),
      statistics_(tensors.statistics),
      pending_loss_(tensors.pending_loss),
      pending_statistics_(tensors.pending_statistics) {
  at::NoGradGuard no_grad;
  const at::TensorOptions options =
      at::TensorOptions().dtype(device.float64 ? at::kDouble : at::kFloat).device(device.device);
  if (!loss_sum_.defined()) {
    loss_sum_ = at::empty({}, options);
    statistics_ = at::empty({statistics_size_}, options);
  }
  loss_sum_.fill_(carries_them ? carried.loss_sum : 0.0);
  if (carries_them && std::int64_t(carried.statistics.size()) == statistics_size_)
    statistics_.copy_(at::tensor(carried.statistics, at::kDouble));
  else
    statistics_.zero_();
  seen_ = carried_seen_ = carries_them ? carried.seen : 0;
  if (accumulates) {
    if (!pending_loss_.defined()) {
      pending_loss_ = at::empty_like(loss_sum_);
      pending_statistics_ = at::empty_like(statistics_);
    }
    pending_loss_.zero_();
    pending_statistics_.zero_();
  }
}

void RunningSums::count(const StepOutput& out, const at::Tensor& counted, std::int64_t size, bool pending) {
  if (!out.counted) add_on_device(out, counted, size, pending);  // else its recording added them
  add_seen(size, pending);
}

void RunningSums::add_on_device(const StepOutput& out, const at::Tensor& counted, std::int64_t size, bool pending) {
  // As few small ops as possible: each costs a dispatch on the hot path.
  at::NoGradGuard no_grad;
  (pending ? pending_loss_ : loss_sum_).add_(out.loss.detach(), double(size));
  at::Tensor& sums = pending ? pending_statistics_ : statistics_;
  if (out.more.empty()) {
    sums.add_(task_.statistics(TaskPass::training, out.logits.detach(), counted));
  } else {
    TensorMap more;
    for (const auto& [name, t] : out.more) more[name] = t.detach();
    sums.add_(task_.statistics(TaskPass::training, out.logits.detach(), counted, more));
  }
}

void RunningSums::commit_pending() {
  at::NoGradGuard no_grad;
  loss_sum_.add_(pending_loss_);
  statistics_.add_(pending_statistics_);
  seen_ += pending_seen_;
  drop_pending();
}

void RunningSums::drop_pending() {
  pending_loss_.zero_();
  pending_statistics_.zero_();
  pending_seen_ = 0;
}

SummedFigures RunningSums::totals(TrainingStrategy& strategy) const {
  std::vector<double> local = {loss_sum_.item<double>(), double(seen_)};
  const at::Tensor host = statistics_.to(at::kCPU, at::kDouble);
  local.insert(local.end(), host.data_ptr<double>(), host.data_ptr<double>() + statistics_size_);
  std::vector<double> all = strategy.sum(local);
  return SummedFigures{all[0], all[1], std::vector<double>(all.begin() + 2, all.end())};
}

}  // namespace plugtrain
