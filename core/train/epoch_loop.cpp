#include "train/epoch_loop.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <sstream>
#include <string>

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>
#include <c10/util/Exception.h>

#include "optim/optimizers.h"
#include "process/interrupt.h"
#include "strategy/training_strategy.h"
#include "train/batch_halving.h"
#include "train/batch_mixer.h"
#include "train/lr_schedule.h"
#include "train/model_ema.h"
#include "train/precision.h"
#include "train/running_sums.h"
#include "train/step_groups.h"
#include "train/train_step.h"
#include "util/clock.h"
#include "util/error.h"
#include "util/text.h"

namespace plugtrain {

EpochLoop::EpochLoop(const LoopConfig& config, double base_lr, std::int64_t loader_batch, data::BatchLoader& batches,
                     TrainStep& step, TrainingStrategy& strategy, const DeviceContext& device,
                     std::vector<std::unique_ptr<Callback>>& callbacks, const Task& task, StepExtras extras)
    : config_(config),
      base_lr_(base_lr),
      loader_batch_(loader_batch),
      batches_(batches),
      step_(step),
      strategy_(strategy),
      device_(device),
      callbacks_(callbacks),
      task_(task),
      extras_(extras),
      // On an accelerator the logged steps are timed: they wait for the device anyway.
      timer_(device.device, config.phase_timing, config.log_interval > 0 ? config.log_interval : 16),
      syncs_(device),
      halving_(config, loader_batch, strategy.processes()),
      stops_on_nonfinite_(config.on_nonfinite == OnNonfinite::stop &&
                          !Precision::skips_nonfinite_steps_itself(config.precision)) {}

// What one call of run() keeps between its steps.
struct EpochLoop::EpochProgress {
  EpochProgress(EpochLoop& loop, LoopState& state)
      : processes(loop.strategy_.processes()),
        sums(loop.task_, loop.device_, state.partial_sums, loop.strategy_.is_rank_zero(),
             loop.config_.accumulate_steps > 1, loop.sum_tensors_),
        groups(state.steps_per_epoch, loop.config_.accumulate_steps, loop.loader_batch_,
               loop.batches_.samples_per_epoch()) {}
  const Clock::time_point start = Clock::now();
  const int processes;  // the strategy's, asked once: every part counts its samples on each of them
  RunningSums sums;
  const StepGroups groups;
  Clock::time_point interval_start;  // of the log interval
  std::int64_t interval_samples = 0;
  std::int64_t steps_trained = 0;  // by this call: the first ones warm up (host_sync_meter.h)
  bool logged = false;             // the step in hand was logged (it read the loss)
  // A recorded accumulated step (graph_step.h) runs its micro-batches at the last one: those
  // before it are counted then, from the recording's outputs.
  struct RecordedPart {
    at::Tensor counted;
    std::int64_t size = 0;
    int micro = 0;
  };
  std::vector<RecordedPart> recorded;
};

EpochTotals EpochLoop::run(LoopState& state) {
  EpochProgress progress(*this, state);
  // A recorded step adds its figures to these sums (in the same tensors every epoch) inside its
  // recording; the samples are still counted here (StepOutput::counted). Mixed batches count
  // other targets than their own, but mixup keeps graphs off (run/device_decisions.cpp).
  if (task_.statistics_recordable() && !extras_.mixer)
    step_.count_with([&sums = progress.sums](const StepOutput& out, const at::Tensor& counted, std::int64_t size) {
      sums.add_on_device(out, counted, size, /*pending=*/false);
    });
  // data.on_device: a recorded step gathers its batches inside the recording (graph_step.h).
  batches_.defer_device_gathers(step_.gathers_in_recording());
  struct Uninstall {  // the counter refers to this call's sums: no host code may call it after it
    TrainStep& step;
    ~Uninstall() { step.count_with({}); }
  } uninstall{step_};
  start_epoch(state);
  progress.interval_start = Clock::now();
  for (;;) {
    syncs_.start_step();
    const std::int64_t checkpoints_before = state.checkpoints_written;
    progress.logged = false;
    timer_.start_step(state.step);
    const std::optional<data::Batch> batch = batches_.next();
    if (!batch) break;
    timer_.mark(Phase::data);
    timer_.add(Phase::copy, batches_.last_copy_seconds(), Phase::data);
    const StepGroup group = progress.groups.of(state.step_in_epoch);
    ++state.step_in_epoch;  // the batch in hand counts, for the callbacks
    train_batch(*batch, group, state, progress);
    const bool timed = timer_.timing() && !device_.device.is_cpu();  // synchronised to time it
    timer_.end_step();
    syncs_.end_step(++progress.steps_trained > 2 && !progress.logged && !timed &&
                    state.checkpoints_written == checkpoints_before);
    if (!group.last()) continue;  // nothing stops a run between the micro-batches of a step
    ++state.planned_step;
    if (stops_after_step(state)) {
      if (state.stop == StopReason::interrupted) return interrupted(state, progress);
      break;
    }
  }
  EpochTotals epoch = totals(progress);
  epoch.host_syncs = syncs_.end_epoch();
  if (stops_on_nonfinite_ && !std::isfinite(epoch.loss_sum)) stop_for_nonfinite(epoch.loss_sum, state, "by");
  return epoch;
}

void EpochLoop::start_epoch(LoopState& state) {
  batches_.start_epoch(state.epoch);
  // Resuming mid-epoch: the epoch's batches are a function of (seed, epoch), so replaying the
  // ones already trained on (without training) puts every generator where it was.
  state.step_in_epoch = 0;
  for (; state.step_in_epoch < state.sampler.batches_done && batches_.next(); ++state.step_in_epoch) {}
  state.sampler.batches_done = 0;
  state.epoch_samples = 0;
  for (auto& c : callbacks_) c->on_epoch_start(state);
  syncs_.start_epoch();
  timer_.take();  // a new epoch's figures
}

void EpochLoop::train_batch(const data::Batch& batch, const StepGroup& group, LoopState& state,
                            EpochProgress& progress) {
  const std::int64_t n = batch.size();
  const std::int64_t index = state.step_in_epoch - 1;  // of the batch in the epoch, 0-based
  // A deferred batch (data.on_device, gathered by the step) has no targets yet: the step's
  // output has them (StepOutput::targets).
  const MixedBatch mixed =
      extras_.mixer ? extras_.mixer->mix(batch.gathered(), state.epoch, index) : MixedBatch{batch, batch.targets};
  // One step for the loader's batch, or (after an out-of-memory halving) several smaller ones.
  for (std::int64_t begin = 0; begin < n;) {
    const std::int64_t size = state.step_batch > 0 ? std::min(state.step_batch, n - begin) : n;
    const data::Batch part = size == n ? mixed.batch : mixed.batch.narrow(begin, size);
    const at::Tensor counted =
        size == n || !mixed.hard_targets.defined() ? mixed.hard_targets : mixed.hard_targets.narrow(0, begin, size);
    StepOutput out;
    if (progress.groups.accumulate() == 1) {
      const double position = double(state.planned_step) + double(begin) / double(n);
      if (!whole_step(part, position, state, progress, out)) continue;  // halved: these samples again, smaller
    } else {
      out = accumulated_part(part, group, size, state, progress);
    }
    begin += size;
    after_part(out, counted, size, group, state, progress);
  }
}

bool EpochLoop::whole_step(const data::Batch& part, double position, LoopState& state, const EpochProgress& progress,
                           StepOutput& out) {
  const double batch_factor =
      state.step_batch > 0 ? lr_scaling_factor(config_.lr_scaling, double(state.step_batch) / double(loader_batch_))
                           : 1.0;
  state.lr = scheduled_lr(config_, base_lr_, position, progress.groups.optimizer_steps_per_epoch()) * batch_factor;
  try {
    out = step_.run(part, state.lr, &timer_);
    return true;
  } catch (const c10::OutOfMemoryError& error) {
    const BatchHalving h = halving_.next(first_line(error.what()), state);
    if (device_.release_cached_memory) device_.release_cached_memory();
    state.step_batch = h.to;
    state.halvings.push_back(h);
    for (auto& c : callbacks_) c->on_batch_halved(state, h);
    return false;
  }
}

StepOutput EpochLoop::accumulated_part(const data::Batch& part, const StepGroup& group, std::int64_t size,
                                       LoopState& state, const EpochProgress& progress) {
  if (group.first())
    state.lr = scheduled_lr(config_, base_lr_, double(state.planned_step), progress.groups.optimizer_steps_per_epoch());
  // Each micro-batch's mean loss weighs its share of the group's samples.
  MicroStep micro{double(size) / double(group.samples), group.first(), group.last()};
  micro.index = int(group.micro);
  micro.count = int(group.size);
  micro.full = group.full && state.step_batch <= 0;
  try {
    return step_.run_micro(part, state.lr, micro, &timer_);
  } catch (const c10::OutOfMemoryError& error) {
    // Part of the step's gradients may already be summed: the batch cannot be retried smaller.
    throw Error("out of memory at step " + std::to_string(state.step + 1) + " (epoch " + std::to_string(state.epoch) +
                ") in a micro-batch of " + std::to_string(part.size()) +
                " samples; with train.accumulate_steps the batch is not halved: lower data.batch_size and raise "
                "train.accumulate_steps to keep the effective batch (" +
                first_line(error.what()) + ")");
  }
}

void EpochLoop::after_part(const StepOutput& out, const at::Tensor& counted, std::int64_t size, const StepGroup& group,
                           LoopState& state, EpochProgress& progress) {
  const bool accumulating = progress.groups.accumulate() > 1;
  const bool stepped = !accumulating || group.last();  // this part ended with an optimizer step
  if (stepped) {
    ++state.step;
    strategy_.note_step(state.step);
    if (out.skipped) {  // train.on_nonfinite = "skip_step": this step changed nothing
      ++state.nonfinite_skipped;
      if (accumulating) {  // nor do its micro-batches count
        progress.sums.drop_pending();
        progress.recorded.clear();
      }
      return;
    }
    if (extras_.ema) extras_.ema->update(state.step);
  }
  if (!accumulating) {
    count(out, counted, size, /*pending=*/false, state, progress);
  } else {
    if (out.loss.defined())
      count(out, counted, size, /*pending=*/true, state, progress);
    else
      progress.recorded.push_back({counted, size, int(group.micro)});
    if (stepped) {
      for (const EpochProgress::RecordedPart& part : progress.recorded)
        count(step_.recorded_micro_output(part.micro), part.counted, part.size, /*pending=*/true, state, progress);
      progress.recorded.clear();
      progress.sums.commit_pending();
    }
  }
  progress.interval_samples += size * progress.processes;
  state.epoch_samples = progress.sums.seen_here() * progress.processes;
  if (!stepped) return;
  for (auto& c : callbacks_) c->on_step_end(state, out.loss);
  if (config_.log_interval > 0 && state.step % config_.log_interval == 0) log_step(out, state, progress);
}

void EpochLoop::count(const StepOutput& out, const at::Tensor& counted, std::int64_t size, bool pending,
                      const LoopState& state, EpochProgress& progress) const {
  // On the host CPU the loss is at hand: it is checked every time, by one read (cheaper than an
  // isfinite kernel and its read; elsewhere that would synchronise the device each step: it is
  // checked when the loss is read anyway).
  if (stops_on_nonfinite_ && device_.device.is_cpu()) {
    const double loss = out.loss.item<double>();
    if (!std::isfinite(loss)) stop_for_nonfinite(loss, state, "at");
  }
  progress.sums.count(out, counted.defined() ? counted : out.targets, size, pending);
}

void EpochLoop::log_step(const StepOutput& out, LoopState& state, EpochProgress& progress) {
  progress.logged = true;
  const double elapsed = seconds_since(progress.interval_start);  // before item(), which waits for the device
  const StepFigures figures{out.loss.item<double>(), state.lr, double(progress.interval_samples) / elapsed};
  if (stops_on_nonfinite_ && !std::isfinite(figures.loss)) stop_for_nonfinite(figures.loss, state, "by");
  for (auto& c : callbacks_) c->on_log_step(state, figures);
  progress.interval_start = Clock::now();
  progress.interval_samples = 0;
}

bool EpochLoop::stops_after_step(LoopState& state) {
  if (config_.max_steps > 0 && state.planned_step >= config_.max_steps) {
    state.request_stop(StopReason::max_steps);
    return true;
  }
  if (state.step_in_epoch < state.steps_per_epoch && strategy_.stop_question_due(state.step) &&
      strategy_.agree_to_stop(interrupt_requested())) {
    state.request_stop(StopReason::interrupted, std::string(interrupt_signal_name()) + " received");
    return true;
  }
  return false;
}

EpochTotals EpochLoop::interrupted(LoopState& state, const EpochProgress& progress) {
  // The step is finished: record where the epoch stands and its sums, for the checkpoint.
  const EpochTotals partial = totals(progress);
  state.sampler.batches_done = state.step_in_epoch;
  state.partial_sums.loss_sum = partial.loss_sum;
  state.partial_sums.statistics = partial.statistics;
  state.partial_sums.seen = static_cast<std::int64_t>(partial.seen);
  return partial;
}

EpochTotals EpochLoop::totals(const EpochProgress& progress) {
  SummedFigures all = progress.sums.totals(strategy_);
  return EpochTotals{all.loss_sum, all.seen, std::move(all.statistics), seconds_since(progress.start), timer_.take()};
}

void EpochLoop::stop_for_nonfinite(double loss, const LoopState& state, const char* at_or_by) const {
  std::ostringstream message;
  message << "the loss is " << (std::isnan(loss) ? "nan" : "inf") << " " << at_or_by << " step " << state.step
          << " (epoch " << state.epoch << "; lr " << state.lr << ", precision " << word_of(config_.precision)
          << "): training stopped. ";
  if (state.last_checkpoint.empty())
    message << "No checkpoint was written before it";
  else
    message << "The last good checkpoint is " << state.last_checkpoint.string();
  message << "; try a lower optim.lr, train.grad_clip, or train.on_nonfinite = \"skip_step\"";
  throw Error(message.str());
}

}  // namespace plugtrain
