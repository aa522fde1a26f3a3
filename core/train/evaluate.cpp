#include "train/evaluate.h"

#include <cmath>

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include "data/batch_loader.h"
#include "plugtrain/model.h"
#include "strategy/training_strategy.h"
#include "train/precision.h"
#include "util/error.h"

namespace plugtrain {

namespace {

// The model's outputs for a batch in evaluation: "output" as float32, the rest in `more`.
at::Tensor batch_outputs(TrainingStrategy& strategy, const Precision& precision, const data::Batch& batch,
                         TensorMap& more) {
  at::Tensor outputs;
  {
    const AutocastScope autocast = precision.autocast();
    if (batch.fields.empty())
      outputs = strategy.evaluate(batch.inputs);
    else
      more = strategy.outputs(batch, /*training=*/false, outputs);
  }
  return outputs.to(at::kFloat);
}

// log((softmax(a) + softmax(b)) / 2) over `dim`, without leaving the log domain: a class whose
// probability underflows in float32 keeps a finite log-probability.
at::Tensor mean_of_probabilities(const at::Tensor& a, const at::Tensor& b, std::int64_t dim) {
  return at::logaddexp(at::log_softmax(a, dim), at::log_softmax(b, dim)) - std::log(2.0);
}

[[noreturn]] void refuse_mirrored_sequence() {
  throw Error("--tta flip: a mirrored input reverses a sequence's order; this task's outputs cannot be averaged with it",
              exit_bad_input);
}

}  // namespace

at::Tensor flip_averaged(const at::Tensor& outputs, const at::Tensor& mirrored_outputs, DatasetTargets kind) {
  switch (kind) {
    case DatasetTargets::class_index: return mean_of_probabilities(outputs, mirrored_outputs, 1);
    case DatasetTargets::pixel_class: return mean_of_probabilities(outputs, mirrored_outputs.flip({-1}), 1);
    case DatasetTargets::multi_hot:
    case DatasetTargets::real: return (outputs + mirrored_outputs) / 2;
    case DatasetTargets::sequence:
    case DatasetTargets::next_token: break;
  }
  refuse_mirrored_sequence();
}

Evaluation evaluate(Model& model, TrainingStrategy& strategy, const Task& task, const data::Dataset& dataset,
                    std::int64_t batch_size, const DeviceContext& device, const Precision& precision) {
  return evaluate(model, strategy, task, dataset, batch_size, device, precision, EvaluateOptions{});
}

Evaluation evaluate(Model& model, TrainingStrategy& strategy, const Task& task, const data::Dataset& dataset,
                    std::int64_t batch_size, const DeviceContext& device, const Precision& precision,
                    const EvaluateOptions& options) {
  const bool ordered =
      task.target_kind() == DatasetTargets::sequence || task.target_kind() == DatasetTargets::next_token;
  if (options.flip && ordered) refuse_mirrored_sequence();  // before any work
  at::NoGradGuard no_grad;
  model.eval();
  strategy.before_evaluation();
  data::BatchLoader batches(dataset, batch_size, /*shuffle=*/false, data::AugmentOptions{}, device.loader, device.device,
                            0, strategy.shard(/*pad=*/false), device.memory_format, device.test_on_device);
  batches.start_epoch(0);
  strategy.evaluation_passes(batches.batches_per_epoch() * (options.flip ? 2 : 1));
  const at::ScalarType sum_type = device.float64 ? at::kDouble : at::kFloat;
  const auto sums = at::TensorOptions().dtype(sum_type).device(device.device);
  at::Tensor loss_sum = at::zeros({}, sums);
  at::Tensor statistics = at::zeros({task.statistics_size(TaskPass::evaluation)}, sums);
  std::int64_t seen = 0;
  while (auto batch = batches.next()) {
    TensorMap more;
    at::Tensor outputs = batch_outputs(strategy, precision, *batch, more);
    if (options.flip) {
      data::Batch mirrored = *batch;
      mirrored.inputs = batch->inputs.flip({-1}).contiguous(batch->inputs.suggest_memory_format());
      TensorMap mirrored_more;  // the unmirrored pass's named outputs (lengths) are the ones read
      outputs = flip_averaged(outputs, batch_outputs(strategy, precision, mirrored, mirrored_more), task.target_kind());
    }
    const std::int64_t n = batch->targets.size(0);
    loss_sum += task.loss(outputs, batch->targets, more) * double(n);  // each batch's mean, weighted by its samples
    statistics += task.statistics(TaskPass::evaluation, outputs, batch->targets, more);
    if (options.on_batch) options.on_batch(outputs, batch->targets);
    seen += n;
  }
  strategy.after_evaluation();
  std::vector<double> local = {loss_sum.item<double>(), double(seen)};
  const at::Tensor host = statistics.to(at::kCPU, at::kDouble);
  local.insert(local.end(), host.data_ptr<double>(), host.data_ptr<double>() + host.numel());
  const std::vector<double> total = strategy.sum(local);
  const std::vector<double> totals(total.begin() + 2, total.end());
  Evaluation e;
  e.loss = total[1] > 0 ? total[0] / total[1] : 0;
  e.metrics = task.metric_values(TaskPass::evaluation, totals, total[1]);
  e.per_class = task.per_class(totals);
  e.samples = static_cast<std::int64_t>(total[1]);
  return e;
}

}  // namespace plugtrain
