#include "train/graph_step.h"

#include <ATen/ATen.h>
#include <c10/util/Exception.h>
#include <torch/optim/optimizer.h>

#include "data/device_resident.h"
#include "optim/fused_optimizers.h"
#include "optim/optimizers.h"
#include "strategy/training_strategy.h"
#include "train/phase_timer.h"
#include "train/precision.h"
#include "util/text.h"

namespace plugtrain {

GraphDecision decide_graphs(const GraphConditions& c) {
  if (c.setting == false) return {false, "off (train.graphs = false)", false};
  const bool mention = c.backend_records.ok() || c.setting == true;
  std::string reason;
  if (!c.backend_records)
    reason = c.backend_records.why_not();
  else if (c.replicas > 1)
    reason = "dp runs " + std::to_string(c.replicas) + " model replicas from this process";
  else if (c.skip_nonfinite)
    reason = "train.on_nonfinite = \"skip_step\" reads every step's loss on the host";
  else if (!c.optimizer_replayable)
    reason = c.optimizer_replayable.why_not();
  else if (!c.fixed_batches)
    reason = c.fixed_batches.why_not();
  else if (!c.loss_replayable)
    reason = c.loss_replayable.why_not();
  else if (!c.recipe)
    reason = c.recipe.why_not();
  if (reason.empty()) {
    if (c.processes > 1)
      return {true, "on: every full training step replayed from two recorded device graphs (forward and backward; the "
                    "optimizer step), its gradients all-reduced between them", mention};
    if (c.accumulate_steps > 1)
      return {true, "on: every full training step (" + std::to_string(c.accumulate_steps) + " micro-batches and the "
                    "optimizer step) replayed from one recorded device graph; a step with the epoch's shorter last "
                    "batch runs eagerly", mention};
    return {true, "on: every full training step replayed from one recorded device graph", mention};
  }
  if (c.setting == true) throw Error("train.graphs = true, but the steps cannot be replayed from a graph: " + reason);
  return {false, "off: " + reason, mention};
}

GraphStep::GraphStep(TrainingStrategy& strategy, Precision& precision, torch::optim::Optimizer& optimizer,
                     const Task& task, ReplayableOptimizer& replayable, std::vector<at::Tensor> parameters, double grad_clip,
                     std::unique_ptr<GraphCapture> capture, bool fall_back_on_failure, int warm_up_steps,
                     std::unique_ptr<GraphCapture> second)
    : TrainStep(strategy, precision, optimizer, task, std::move(parameters), grad_clip),
      replayable_(replayable),
      capture_(std::move(capture)),
      second_(std::move(second)),
      fall_back_on_failure_(fall_back_on_failure),
      warm_up_steps_(std::max(1, warm_up_steps)) {}

GraphStep::~GraphStep() = default;

namespace {

// Tensors of `batch`'s shapes (empty_like keeps channels-last strides) that a recording reads:
// a deferred batch's places, so that the recording gathers the batch itself.
data::Batch static_copy_of(const data::Batch& batch) {
  data::Batch copy;
  if (!batch.deferred) {
    copy.inputs = at::empty_like(batch.inputs);
    copy.targets = at::empty_like(batch.targets);
    return copy;
  }
  const data::GatherPlaces& places = batch.deferred->places;
  data::GatherPlaces mine{at::empty_like(places.samples), {}, {}};
  if (places.rows.defined()) {
    mine.rows = at::empty_like(places.rows);
    mine.cols = at::empty_like(places.cols);
  }
  copy.deferred = std::make_shared<data::DeferredGather>(
      data::DeferredGather{batch.deferred->source, std::move(mine), batch.deferred->memory_format});
  return copy;
}

bool same_layout(const at::Tensor& a, const at::Tensor& b) {
  return a.defined() == b.defined() && (!a.defined() || (a.sizes().equals(b.sizes()) && a.strides() == b.strides()));
}

// Whether `batch` can be copied into `fixed` (static_copy_of a batch of the recorded size).
bool fits(const data::Batch& batch, const data::Batch& fixed) {
  if (bool(batch.deferred) != bool(fixed.deferred)) return false;
  if (!batch.deferred) return same_layout(batch.inputs, fixed.inputs);
  const data::GatherPlaces &given = batch.deferred->places, &mine = fixed.deferred->places;
  return batch.deferred->source == fixed.deferred->source &&
         batch.deferred->memory_format == fixed.deferred->memory_format && same_layout(given.samples, mine.samples) &&
         same_layout(given.rows, mine.rows) && same_layout(given.cols, mine.cols);
}

void copy_into(data::Batch& fixed, const data::Batch& batch) {
  if (!batch.deferred) {
    fixed.inputs.copy_(batch.inputs, /*non_blocking=*/true);
    fixed.targets.copy_(batch.targets, /*non_blocking=*/true);
    return;
  }
  // The places only: the recording gathers the samples, converts and normalises them.
  const data::GatherPlaces &given = batch.deferred->places, &mine = fixed.deferred->places;
  mine.samples.copy_(given.samples, /*non_blocking=*/true);
  if (mine.rows.defined()) {
    mine.rows.copy_(given.rows, /*non_blocking=*/true);
    mine.cols.copy_(given.cols, /*non_blocking=*/true);
  }
}

}  // namespace

StepOutput GraphStep::run(const data::Batch& batch, double lr, PhaseTimer* timer) {
  if (!capture_) return TrainStep::run(batch, lr, timer);
  // The first batch sets the shape that is recorded.
  if (!static_batch_.inputs.defined() && !static_batch_.deferred) static_batch_ = static_copy_of(batch);
  if (!fits(batch, static_batch_)) return TrainStep::run(batch, lr, timer);  // a partial or halved batch: eagerly
  StepOutput out = run_recorded(batch, lr);
  if (timer) timer->mark(Phase::optimizer);  // one recorded step: its phases cannot be told apart
  return out;
}

StepOutput GraphStep::run_recorded(const data::Batch& batch, double lr) {
  copy_into(static_batch_, batch);
  lr_ = lr;
  // Each reads only members: a recorder may keep it and run it again later.
  auto whole = [this] {
    static_out_ = TrainStep::run(static_batch_, lr_, nullptr);
    count_recorded_step();
  };
  auto first_half = [this] {
    static_out_ = forward_backward_unsynced(static_batch_);
    count_recorded_step();
  };
  auto second_half = [this] { optimizer_step(); };
  // Several processes: forward and backward, then (eagerly) the gradients averaged, then the
  // optimizer step; the parts that talk to the other ranks stay out of the recordings.
  const bool split = second_ != nullptr;
  if (!step_recorded(split ? std::function<void()>(first_half) : whole, split ? second_half : std::function<void()>()))
    return TrainStep::run(batch, lr, nullptr);  // nothing ran: this batch eagerly, and every later one
  return static_out_;
}

void GraphStep::count_recorded_step() {
  if (!counter_ || static_out_.skipped) return;
  try {
    counter_(static_out_, static_out_.targets, static_out_.targets.size(0));
  } catch (const c10::OutOfMemoryError& error) {
    // After the optimizer step (a warm-up step runs eagerly): the batch must not be retried.
    throw OptimizerOutOfMemory(
        "out of memory counting the step's figures after its optimizer step; the batch cannot be "
        "retried: resume from the last checkpoint with a smaller data.batch_size (" +
        first_line(error.what()) + ")");
  }
  static_out_.counted = true;  // set again by every run of the host code: a recorder may rerun it
}

// An accumulated step: the group's micro-batches are gathered into static inputs as they come,
// and the last one runs the whole group (zeroed gradients, every micro-batch's forward and
// backward with its 1/N share of the loss, the optimizer step) as one recording.
StepOutput GraphStep::run_micro(const data::Batch& batch, double lr, const MicroStep& micro, PhaseTimer* timer) {
  if (micro.first) group_recorded_ = capture_ && !second_ && micro.full && micro.count > 1;
  if (!group_recorded_) return TrainStep::run_micro(batch, lr, micro, timer);
  return run_micro_recorded(batch.gathered(), lr, micro, timer);  // a group's micro-batches are gathered as they come
}

StepOutput GraphStep::run_micro_recorded(const data::Batch& batch, double lr, const MicroStep& micro,
                                         PhaseTimer* timer) {
  if (static_group_.size() != std::size_t(micro.count)) {
    static_group_.assign(micro.count, data::Batch{});
    for (data::Batch& slot : static_group_) {
      slot.inputs = at::empty_like(batch.inputs);
      slot.targets = at::empty_like(batch.targets);
    }
  }
  data::Batch& slot = static_group_.at(micro.index);
  if (!batch.inputs.sizes().equals(slot.inputs.sizes()) || batch.inputs.strides() != slot.inputs.strides())
    throw Error("internal: micro-batch " + std::to_string(micro.index) + " of a recorded step changed its shape");
  slot.inputs.copy_(batch.inputs, /*non_blocking=*/true);
  slot.targets.copy_(batch.targets, /*non_blocking=*/true);
  if (!micro.last) return {};  // runs with the group, at its last micro-batch
  lr_ = lr;
  auto group = [this] {
    const int n = int(static_group_.size());
    static_group_out_.resize(n);
    for (int i = 0; i < n; ++i) {
      static_group_out_[i] = TrainStep::run_micro(static_group_[i], lr_, MicroStep{1.0 / n, i == 0, i == n - 1}, nullptr);
    }
  };
  bool recorded = false;
  try {
    recorded = step_recorded(group, {});
  } catch (const c10::OutOfMemoryError&) {
    // Out of memory while recording (its pool cannot reuse what eager steps cached): with
    // "auto" the group runs eagerly, as accumulation did before it was recorded; a warm-up
    // step's (an eager step) or train.graphs = true's is the run's.
    if (capture_ || !fall_back_on_failure_) throw;
  }
  if (!recorded) group();  // refused: this group eagerly, and every later one
  if (timer) timer->mark(Phase::optimizer);  // one recorded step: its phases cannot be told apart
  return static_group_out_.back();
}

const StepOutput& GraphStep::recorded_micro_output(int index) const { return static_group_out_.at(index); }

bool GraphStep::step_recorded(const std::function<void()>& work, const std::function<void()>& second_work) {
  // Warm-up steps are real steps; their errors (out of memory) are the step's. They go on until
  // every optimizer state exists (fp16 may skip the first steps, and SGD makes its momentum
  // buffers in its first real one), so that what is recorded is an ordinary step.
  if (warmed_up_ < warm_up_steps_ || !replayable_.ready_to_record()) {
    warm_up(work, second_work);
    return true;
  }
  precision().skip_on_device(replayable_);  // fp16: the overflow check is not read back from here on
  set_lr(optimizer(), lr_);
  replayable_.write_lr();  // so the recorded step() finds its learning rate written and records no write
  if (captured_ && replayable_.layout() != recorded_layout_) captured_ = false;  // its tensors are gone
  if (!captured_ && !record(work, second_work)) return false;
  replay(static_cast<bool>(second_work));
  return true;
}

void GraphStep::warm_up(const std::function<void()>& work, const std::function<void()>& second_work) {
  if (second_work) {
    strategy().before_unsynced_forward();
    capture_->warm_up(work);
    strategy().average_gradients(parameters());
    second_->warm_up(second_work);
  } else {
    capture_->warm_up(work);
  }
  ++warmed_up_;
}

bool GraphStep::record(const std::function<void()>& work, const std::function<void()>& second_work) {
  const std::vector<std::int64_t> host_steps = replayable_.host_steps();
  auto give_up = [&](std::string reason) {
    replayable_.restore_host_steps(host_steps);
    precision().skip_on_host(replayable_);
    capture_.reset();
    second_.reset();
    fallback_reason_ = std::move(reason);
  };
  try {
    capture_->capture(work);
    if (second_work) {
      recorded_grads_.clear();  // where the first recording leaves the gradients
      for (const auto& p : parameters()) recorded_grads_.push_back(p.grad());
      second_->capture(second_work);
    }
  } catch (const c10::OutOfMemoryError&) {
    // The epoch loop halves the batch and tries again: those steps, of another size, run eagerly.
    give_up("out of device memory while recording the step");
    throw;
  } catch (const std::exception& e) {
    give_up(first_line(e.what()));
    if (!fall_back_on_failure_)
      throw GraphCaptureError("train.graphs = true, but the training step cannot be recorded as a device graph: " +
                              fallback_reason_);
    return false;
  }
  // The recording ran the host code of one step (the optimizer counted it) but no kernel.
  replayable_.restore_host_steps(host_steps);
  captured_ = true;
  recorded_layout_ = replayable_.layout();
  return true;
}

void GraphStep::replay(bool split) {
  // A replay runs the recorded kernels, not the host code: the host step counts move by one here
  // (set, not added, so a recorder that reruns the host code too counts the same).
  std::vector<std::int64_t> host_steps = replayable_.host_steps();
  if (split) {
    // An eager step (a partial batch) since may have given the parameters other gradient
    // tensors: they are pointed back at those the recordings write and read.
    const std::vector<at::Tensor>& params = parameters();
    for (std::size_t i = 0; i < params.size() && i < recorded_grads_.size(); ++i)
      if (recorded_grads_[i].defined()) params[i].mutable_grad() = recorded_grads_[i];
    strategy().before_unsynced_forward();
    capture_->replay();
    strategy().average_gradients(params);
    second_->replay();
  } else {
    capture_->replay();
  }
  for (auto& s : host_steps) ++s;
  replayable_.restore_host_steps(host_steps);
  ++replays_;
}

}  // namespace plugtrain
