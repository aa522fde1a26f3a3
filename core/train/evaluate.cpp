#include "train/evaluate.h"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include "data/batch_loader.h"
#include "plugtrain/model.h"
#include "strategy/training_strategy.h"
#include "train/precision.h"

namespace plugtrain {

Evaluation evaluate(Model& model, TrainingStrategy& strategy, const Task& task, const data::Dataset& dataset,
                    std::int64_t batch_size, const DeviceContext& device, const Precision& precision) {
  at::NoGradGuard no_grad;
  model.eval();
  strategy.before_evaluation();
  data::BatchLoader batches(dataset, batch_size, /*shuffle=*/false, data::AugmentOptions{}, device.loader, device.device,
                            0, strategy.shard(/*pad=*/false), device.memory_format, device.test_on_device);
  batches.start_epoch(0);
  const at::ScalarType sum_type = device.float64 ? at::kDouble : at::kFloat;
  const auto sums = at::TensorOptions().dtype(sum_type).device(device.device);
  at::Tensor loss_sum = at::zeros({}, sums);
  at::Tensor statistics = at::zeros({task.statistics_size(Pass::evaluation)}, sums);
  std::int64_t seen = 0;
  while (auto batch = batches.next()) {
    at::Tensor outputs;
    TensorMap more;
    {
      const AutocastScope autocast = precision.autocast();
      if (batch->fields.empty())
        outputs = strategy.evaluate(batch->inputs);
      else
        more = strategy.outputs(*batch, /*training=*/false, outputs);
    }
    outputs = outputs.to(at::kFloat);
    const std::int64_t n = batch->targets.size(0);
    loss_sum += task.loss(outputs, batch->targets, more) * double(n);  // each batch's mean, weighted by its samples
    statistics += task.statistics(Pass::evaluation, outputs, batch->targets, more);
    seen += n;
  }
  std::vector<double> local = {loss_sum.item<double>(), double(seen)};
  const at::Tensor host = statistics.to(at::kCPU, at::kDouble);
  local.insert(local.end(), host.data_ptr<double>(), host.data_ptr<double>() + host.numel());
  const std::vector<double> total = strategy.sum(local);
  const std::vector<double> totals(total.begin() + 2, total.end());
  Evaluation e;
  e.loss = total[1] > 0 ? total[0] / total[1] : 0;
  e.metrics = task.metric_values(Pass::evaluation, totals, total[1]);
  e.per_class = task.per_class(totals);
  return e;
}

}  // namespace plugtrain
