#include "train/running_sums.h"

#include <utility>

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include "train/train_step.h"

namespace plugtrain {

RunningSums::RunningSums(const Task& task, const DeviceContext& device, const EpochSums* carried, bool accumulate,
                         std::function<void(double loss)> check_loss)
    : task_(task), check_loss_(std::move(check_loss)), statistics_size_(task.statistics_size(Pass::training)) {
  const at::ScalarType sum_type = device.float64 ? at::kDouble : at::kFloat;
  loss_ = at::full({}, carried ? carried->loss_sum : 0.0, at::TensorOptions().dtype(sum_type).device(device.device));
  at::Tensor statistics = at::zeros({statistics_size_}, at::TensorOptions().dtype(sum_type));
  if (carried && std::int64_t(carried->statistics.size()) == statistics_size_)
    statistics = at::tensor(carried->statistics, at::kDouble).to(sum_type);
  statistics_ = statistics.to(device.device);
  seen_ = carried ? carried->seen : 0;
  if (accumulate) {
    pending_loss_ = at::zeros_like(loss_);
    pending_statistics_ = at::zeros_like(statistics_);
  }
}

void RunningSums::add(const StepOutput& out, const at::Tensor& counted, std::int64_t size, bool pending) {
  if (check_loss_) check_loss_(out.loss.item<double>());
  // As few small ops as possible: each costs a dispatch on the hot path.
  at::NoGradGuard no_grad;
  (pending ? pending_loss_ : loss_).add_(out.loss.detach(), double(size));
  at::Tensor& sums = pending ? pending_statistics_ : statistics_;
  if (out.more.empty()) {
    sums.add_(task_.statistics(Pass::training, out.logits.detach(), counted));
  } else {
    TensorMap more;
    for (const auto& [name, t] : out.more) more[name] = t.detach();
    sums.add_(task_.statistics(Pass::training, out.logits.detach(), counted, more));
  }
  (pending ? pending_seen_ : seen_) += size;
}

void RunningSums::add_recorded(int micro, const at::Tensor& counted, std::int64_t size) {
  recorded_.push_back({counted, size, micro});
}

void RunningSums::take_step(const TrainStep& step) {
  for (const RecordedPart& part : recorded_)
    add(step.recorded_micro_output(part.micro), part.counted, part.size, /*pending=*/true);
  recorded_.clear();
  at::NoGradGuard no_grad;
  loss_.add_(pending_loss_);
  statistics_.add_(pending_statistics_);
  seen_ += pending_seen_;
  drop_step();
}

void RunningSums::drop_step() {
  pending_loss_.zero_();
  pending_statistics_.zero_();
  pending_seen_ = 0;
  recorded_.clear();
}

std::vector<double> RunningSums::local() const {
  std::vector<double> local = {loss_.item<double>(), double(seen_)};
  const at::Tensor host = statistics_.to(at::kCPU, at::kDouble);
  local.insert(local.end(), host.data_ptr<double>(), host.data_ptr<double>() + statistics_size_);
  return local;
}

}  // namespace plugtrain
