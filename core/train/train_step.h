// One training step: forward and loss under the precision's autocast, backward through the
// strategy (gradient sync), then the optimizer step the precision allows. A CUDA-graph step,
// an out-of-memory retry or a per-phase timer replaces or wraps this one class.
#pragma once

#include <functional>
#include <vector>

#include <ATen/core/Tensor.h>

#include "data/batch_loader.h"
#include "task/task.h"
#include "util/error.h"

namespace torch::optim {
class Optimizer;
}

namespace plugtrain {

class PhaseTimer;
class Precision;
class Task;
class TrainingStrategy;

// Out of memory inside the optimizer step, which may already have changed some parameters:
// unlike forward and backward, such a step cannot be tried again with a smaller batch.
class OptimizerOutOfMemory : public Error {
 public:
  explicit OptimizerOutOfMemory(const std::string& message) : Error(message) {}
};

struct StepOutput {
  at::Tensor loss;    // scalar, on the device
  at::Tensor logits;  // the model's outputs, on the device ((batch, classes) for classification)
  TensorMap more;     // its other named outputs, for a batch with fields (output_lengths, ...)
  bool skipped = false;  // train.on_nonfinite = "skip_step" dropped it: nan or inf in the loss or gradients
  // Its loss and statistics are already in the epoch's running sums: a recorded step adds them
  // on the device inside its recording (graph_step.h), so only its samples are left to count.
  bool counted = false;
  // The targets it trained on: a deferred batch's (data::Batch::deferred) are gathered by the step.
  at::Tensor targets;
};

// Adds a whole step's figures (`size` samples, hard targets `counted`) to the epoch's running
// sums on the device (RunningSums::add_on_device), for a step that counts them itself.
using StepCounter = std::function<void(const StepOutput& out, const at::Tensor& counted, std::int64_t size)>;

// One micro-batch of an accumulated step (train.accumulate_steps): its gradients add to the
// ones before it, its loss counts `loss_weight` of the step's (its share of the samples), the
// first starts from zero gradients and only the last is synchronised over processes and
// followed by the optimizer step.
struct MicroStep {
  double loss_weight = 1;
  bool first = true, last = true;
  int index = 0, count = 1;  // its place in the step's group of micro-batches, and their number
  // Every micro-batch of the group has the loader's full batch (train.accumulate_steps of them):
  // a graph step records and replays such groups whole (graph_step.h).
  bool full = false;
};

class TrainStep {
 public:
  // skip_nonfinite: drop a step whose loss or gradients are not finite (one device sync each).
  // `task` gives the loss of the model's outputs.
  TrainStep(TrainingStrategy& strategy, Precision& precision, torch::optim::Optimizer& optimizer, const Task& task,
            std::vector<at::Tensor> parameters, double grad_clip, bool skip_nonfinite = false);
  virtual ~TrainStep() = default;

  // `timer` (may be null) is told where forward, backward and the optimizer step end.
  virtual StepOutput run(const data::Batch& batch, double lr, PhaseTimer* timer = nullptr);
  // One micro-batch of an accumulated step. `lr` is used by the last one. The output's loss is
  // the micro-batch's own (unweighted); a step that runs the group's micro-batches only at its
  // last one (GraphStep) returns no loss for the others: recorded_micro_output has it then.
  virtual StepOutput run_micro(const data::Batch& batch, double lr, const MicroStep& micro,
                               PhaseTimer* timer = nullptr);
  // After the last micro-batch of a group: the output of micro-batch `index` of it, where
  // run_micro returned none. Valid until the next step.
  virtual const StepOutput& recorded_micro_output(int index) const;
  // How a step that counts its own figures adds them (its outputs say `counted`); this step
  // leaves them to the epoch loop and ignores it.
  virtual void count_with(StepCounter) {}
  // Whether this step gathers a deferred batch (data.on_device) inside its recording, so that
  // the loader should leave full batches ungathered (BatchLoader::defer_device_gathers). Every
  // step takes deferred batches; an eager one gathers them itself, as the loader would.
  virtual bool gathers_in_recording() const { return false; }

 protected:
  torch::optim::Optimizer& optimizer() { return optimizer_; }
  Precision& precision() { return precision_; }
  TrainingStrategy& strategy() { return strategy_; }
  const std::vector<at::Tensor>& parameters() const { return parameters_; }
  // run() in two halves, for a step whose gradients are averaged over the processes between
  // them (ddp replayed from recordings): forward, loss and backward without the strategy's
  // gradient sync; then the precision's unscale, clipping and optimizer step.
  StepOutput forward_backward_unsynced(const data::Batch& batch);
  void optimizer_step();

 private:
  // Forward and loss under the precision's autocast; `synced`: through the strategy's forward
  // (ddp shares rank 0's buffers first), else the model alone. A deferred batch is gathered
  // first: inside the recording, when the step is recorded.
  StepOutput forward_and_loss(const data::Batch& batch, bool synced);

  TrainingStrategy& strategy_;
  Precision& precision_;
  torch::optim::Optimizer& optimizer_;
  const Task& task_;
  std::vector<at::Tensor> parameters_;
  double grad_clip_;
  bool skip_nonfinite_;
};

}  // namespace plugtrain
