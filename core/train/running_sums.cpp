#include "train/running_sums.h"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include "strategy/training_strategy.h"
#include "train/train_step.h"

namespace plugtrain {

RunningSums::RunningSums(const Task& task, const DeviceContext& device, const EpochSums& carried, bool carries_them,
                         bool accumulates)
    : task_(task), statistics_size_(task.statistics_size(TaskPass::training)) {
  const at::ScalarType sum_type = device.float64 ? at::kDouble : at::kFloat;
  loss_sum_ =
      at::full({}, carries_them ? carried.loss_sum : 0.0, at::TensorOptions().dtype(sum_type).device(device.device));
  at::Tensor statistics = at::zeros({statistics_size_}, at::TensorOptions().dtype(sum_type));
  if (carries_them && std::int64_t(carried.statistics.size()) == statistics_size_)
    statistics = at::tensor(carried.statistics, at::kDouble).to(sum_type);
  statistics_ = statistics.to(device.device);
  seen_ = carried_seen_ = carries_them ? carried.seen : 0;
  if (accumulates) {
    pending_loss_ = at::zeros_like(loss_sum_);
    pending_statistics_ = at::zeros_like(statistics_);
  }
}

void RunningSums::count(const StepOutput& out, const at::Tensor& counted, std::int64_t size, bool pending) {
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
  (pending ? pending_seen_ : seen_) += size;
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
