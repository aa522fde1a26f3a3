#include "train/train_step.h"

#include <ATen/ATen.h>
#include <c10/util/Exception.h>
#include <torch/optim/optimizer.h>

#include "optim/optimizers.h"
#include "strategy/training_strategy.h"
#include "task/task.h"
#include "train/phase_timer.h"
#include "train/precision.h"
#include "util/error.h"
#include "util/text.h"

namespace plugtrain {

TrainStep::TrainStep(TrainingStrategy& strategy, Precision& precision, torch::optim::Optimizer& optimizer,
                     const Task& task, std::vector<at::Tensor> parameters, double grad_clip, bool skip_nonfinite)
    : strategy_(strategy),
      precision_(precision),
      optimizer_(optimizer),
      task_(task),
      parameters_(std::move(parameters)),
      grad_clip_(grad_clip),
      skip_nonfinite_(skip_nonfinite && !Precision::skips_nonfinite_steps_itself(precision.mode())) {}

namespace {

// nan or inf in the loss or any gradient; reading it synchronises the device.
bool all_finite(const at::Tensor& loss, const std::vector<at::Tensor>& parameters) {
  at::Tensor finite = at::isfinite(loss.detach());
  for (const auto& p : parameters)
    if (p.grad().defined()) finite = finite.logical_and(at::isfinite(p.grad()).all());
  return finite.item<bool>();
}

}  // namespace

StepOutput TrainStep::run(const data::Batch& batch, double lr, PhaseTimer* timer) {
  set_lr(optimizer_, lr);
  optimizer_.zero_grad();
  StepOutput out = forward_and_loss(batch, /*synced=*/true);
  if (timer) timer->mark(Phase::forward);
  strategy_.backward([&] { precision_.backward(out.loss); });
  if (timer) timer->mark(Phase::backward);
  if (skip_nonfinite_ && !all_finite(out.loss, parameters_)) {
    optimizer_.zero_grad();
    out.skipped = true;
    return out;
  }
  optimizer_step();
  if (timer) timer->mark(Phase::optimizer);
  return out;
}

StepOutput TrainStep::run_micro(const data::Batch& batch, double lr, const MicroStep& micro, PhaseTimer* timer) {
  if (micro.first) optimizer_.zero_grad();
  StepOutput out = forward_and_loss(batch, /*synced=*/true);
  if (timer) timer->mark(Phase::forward);
  const at::Tensor weighted = out.loss * micro.loss_weight;
  // Gradients are averaged over the processes once, in the last micro-batch's backward (ddp's
  // no_sync for the others).
  if (micro.last)
    strategy_.backward([&] { precision_.backward(weighted); });
  else
    strategy_.backward_unsynced([&] { precision_.backward(weighted); });
  if (timer) timer->mark(Phase::backward);
  if (!micro.last) return out;
  // Scaling (fp16), the non-finite check and clipping act on the accumulated gradient.
  if (skip_nonfinite_ && !all_finite(out.loss, parameters_)) {
    optimizer_.zero_grad();
    out.skipped = true;
    return out;
  }
  set_lr(optimizer_, lr);
  optimizer_step();
  if (timer) timer->mark(Phase::optimizer);
  return out;
}

const StepOutput& TrainStep::recorded_micro_output(int index) const {
  throw Error("internal: micro-batch " + std::to_string(index) + " of an eager step has its output already");
}

StepOutput TrainStep::forward_and_loss(const data::Batch& given, bool synced) {
  const data::Batch batch = given.gathered();
  StepOutput out;
  out.targets = batch.targets;
  const AutocastScope autocast = precision_.autocast();
  if (batch.fields.empty()) {
    out.logits = synced ? strategy_.forward(batch.inputs) : strategy_.model_forward(batch.inputs);
    out.loss = task_.loss(out.logits, batch.targets);
    return out;
  }
  // Named fields: never recorded in a graph (GraphConditions), so always synced here.
  out.more = strategy_.outputs(batch, /*training=*/true, out.logits);
  out.loss = task_.loss(out.logits, batch.targets, out.more);
  return out;
}

StepOutput TrainStep::forward_backward_unsynced(const data::Batch& batch) {
  optimizer_.zero_grad();
  StepOutput out = forward_and_loss(batch, /*synced=*/false);
  precision_.backward(out.loss);
  return out;
}

void TrainStep::optimizer_step() {
  try {
    const bool stepped = precision_.step(optimizer_, parameters_, grad_clip_, [this](const std::vector<at::Tensor>& g) {
      return strategy_.gradient_norm(g);
    });
    if (stepped) strategy_.after_optimizer_step();
  } catch (const c10::OutOfMemoryError& error) {
    // Unlike forward and backward, a step that failed half-way has changed some parameters
    // (and optimizer state): it cannot be tried again with a smaller batch.
    throw OptimizerOutOfMemory("out of memory in the optimizer step; some parameters may already be updated, so the batch "
                "cannot be retried: resume from the last checkpoint with a smaller data.batch_size (" +
                first_line(error.what()) + ")");
  }
}

}  // namespace plugtrain
