#include "train/evaluate.h"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include "data/batch_loader.h"
#include "plugtrain/model.h"
#include "strategy/training_strategy.h"
#include "train/precision.h"

namespace plugtrain {

Evaluation evaluate(Model& model, TrainingStrategy& strategy, const data::Dataset& dataset, std::int64_t batch_size,
                    const DeviceContext& device, const Precision& precision) {
  at::NoGradGuard no_grad;
  model.eval();
  strategy.before_evaluation();
  data::BatchLoader batches(dataset, batch_size, /*shuffle=*/false, data::AugmentOptions{}, device.loader, device.device,
                            0, strategy.shard(/*pad=*/false), device.memory_format, device.test_on_device);
  batches.start_epoch(0);
  const at::ScalarType sum_type = device.float64 ? at::kDouble : at::kFloat;
  at::Tensor loss_sum = at::zeros({}, at::TensorOptions().dtype(sum_type).device(device.device));
  at::Tensor correct = at::zeros({}, at::TensorOptions().dtype(at::kLong).device(device.device));
  std::int64_t seen = 0;
  while (auto batch = batches.next()) {
    at::Tensor logits;
    {
      const AutocastScope autocast = precision.autocast();
      logits = strategy.evaluate(batch->inputs);
    }
    loss_sum += at::cross_entropy_loss(logits.to(at::kFloat), batch->targets, {}, at::Reduction::Sum);
    correct += logits.argmax(1).eq(batch->targets).sum();
    seen += batch->targets.size(0);
  }
  const std::vector<double> total =
      strategy.sum({loss_sum.item<double>(), double(correct.item<std::int64_t>()), double(seen)});
  Evaluation e;
  if (total[2] > 0) {
    e.loss = total[0] / total[2];
    e.accuracy = total[1] / total[2];
  }
  return e;
}

}  // namespace plugtrain
