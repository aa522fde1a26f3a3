#include "train/epoch_loop.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <sstream>
#include <string>

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>
#include <c10/util/Exception.h>

#include "strategy/training_strategy.h"
#include "train/batch_mixer.h"
#include "train/model_ema.h"
#include "train/optimizers.h"
#include "train/precision.h"
#include "train/train_step.h"
#include "util/clock.h"
#include "util/error.h"
#include "util/interrupt.h"
#include "util/text.h"

namespace plugtrain {

EpochLoop::EpochLoop(const LoopConfig& config, double base_lr, std::int64_t loader_batch,
                     data::BatchLoader& batches, TrainStep& step, TrainingStrategy& strategy,
                     const DeviceContext& device, std::vector<std::unique_ptr<Callback>>& callbacks, const Task& task,
                     StepExtras extras)
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
      stops_on_nonfinite_(config.on_nonfinite == OnNonfinite::stop &&
                          !Precision::skips_nonfinite_steps_itself(config.precision)) {}

EpochTotals EpochLoop::run(LoopState& state) {
  const auto start = Clock::now();
  const int processes = strategy_.processes();
  // The sums of an interrupted epoch are totals over all processes: one of them carries them.
  const bool carries_partial = strategy_.is_rank_zero();
  const std::int64_t carried_seen = carries_partial ? state.partial_sums.seen : 0;
  // Running sums stay on the device: reading them every step would synchronise it.
  const at::ScalarType sum_type = device_.float64 ? at::kDouble : at::kFloat;
  at::Tensor loss_sum = at::full({}, carries_partial ? state.partial_sums.loss_sum : 0.0,
                                 at::TensorOptions().dtype(sum_type).device(device_.device));
  // The task's training statistics (task/task.h), summed as the loss is.
  const std::int64_t statistics_size = task_.statistics_size(Pass::training);
  at::Tensor statistics = at::zeros({statistics_size}, at::TensorOptions().dtype(sum_type));
  if (carries_partial && std::int64_t(state.partial_sums.statistics.size()) == statistics_size)
    statistics = at::tensor(state.partial_sums.statistics, at::kDouble).to(sum_type);
  statistics = statistics.to(device_.device);
  std::int64_t seen = carried_seen;
  auto totals = [&] {
    std::vector<double> local = {loss_sum.item<double>(), double(seen)};
    const at::Tensor host = statistics.to(at::kCPU, at::kDouble);
    local.insert(local.end(), host.data_ptr<double>(), host.data_ptr<double>() + statistics_size);
    std::vector<double> t = strategy_.sum(local);
    return EpochTotals{t[0], t[1], std::vector<double>(t.begin() + 2, t.end()), seconds_since(start), timer_.take()};
  };

  batches_.start_epoch(state.epoch);
  // Resuming mid-epoch: the epoch's batches are a function of (seed, epoch), so replaying the
  // ones already trained on (without training) puts every generator where it was.
  state.step_in_epoch = 0;
  for (; state.step_in_epoch < state.sampler.batches_done && batches_.next(); ++state.step_in_epoch) {
  }
  state.sampler.batches_done = 0;
  state.epoch_samples = 0;
  for (auto& c : callbacks_) c->on_epoch_start(state);
  syncs_.start_epoch();
  std::int64_t steps_trained = 0;  // by this call: the first ones warm up (host_sync_meter.h)

  auto interval_start = Clock::now();
  std::int64_t interval_samples = 0;
  const std::int64_t log_interval = config_.log_interval;
  timer_.take();  // a new epoch's figures
  const std::int64_t accumulate = std::max<std::int64_t>(1, config_.accumulate_steps);
  // The schedule counts optimizer steps: with accumulation, one per group of micro-batches.
  const std::int64_t schedule_steps_per_epoch = (state.steps_per_epoch + accumulate - 1) / accumulate;
  // The epoch's last batch holds what is left of the shard.
  const std::int64_t last_batch = batches_.samples_per_epoch() - (state.steps_per_epoch - 1) * loader_batch_;
  // With accumulation, a step's figures wait until it is taken: a skipped one counts nothing.
  at::Tensor pending_loss, pending_statistics;
  std::int64_t pending_seen = 0;
  if (accumulate > 1) {
    pending_loss = at::zeros_like(loss_sum);
    pending_statistics = at::zeros_like(statistics);
  }
  // A part's loss and statistics into running sums. On the host CPU the loss is at hand: it is
  // checked every time, by one read (cheaper than an isfinite kernel and its read; elsewhere
  // that would synchronise the device each step: it is checked when the loss is read anyway).
  auto count = [&](const StepOutput& out, const at::Tensor& counted, std::int64_t size, bool into_pending) {
    if (stops_on_nonfinite_ && device_.device.is_cpu()) {
      const double loss = out.loss.item<double>();
      if (!std::isfinite(loss)) stop_for_nonfinite(loss, state, "at");
    }
    // As few small ops as possible: each costs a dispatch on the hot path.
    at::NoGradGuard no_grad;
    (into_pending ? pending_loss : loss_sum).add_(out.loss.detach(), double(size));
    at::Tensor& sums = into_pending ? pending_statistics : statistics;
    if (out.more.empty()) {
      sums.add_(task_.statistics(Pass::training, out.logits.detach(), counted));
    } else {
      TensorMap more;
      for (const auto& [name, t] : out.more) more[name] = t.detach();
      sums.add_(task_.statistics(Pass::training, out.logits.detach(), counted, more));
    }
    (into_pending ? pending_seen : seen) += size;
  };
  // A recorded accumulated step (graph_step.h) runs its micro-batches at the last one: those
  // before it are counted then, from the recording's outputs.
  struct RecordedPart {
    at::Tensor counted;
    std::int64_t size = 0;
    int micro = 0;
  };
  std::vector<RecordedPart> recorded;
  bool group_ended = true;
  for (;;) {
    syncs_.start_step();
    const std::int64_t checkpoints_before = state.checkpoints_written;
    bool logged = false;
    timer_.start_step(state.step);
    const std::optional<data::Batch> batch = batches_.next();
    if (!batch) break;
    timer_.mark(Phase::data);
    timer_.add(Phase::copy, batches_.last_copy_seconds(), Phase::data);
    const std::int64_t n = batch->targets.size(0);
    const std::int64_t index = state.step_in_epoch;  // of the batch in the epoch, 0-based
    ++state.step_in_epoch;  // the batch in hand counts, for the callbacks
    // Accumulation: the epoch's batches in groups of `accumulate` (the last may be shorter),
    // each group one optimizer step.
    const std::int64_t group_begin = index / accumulate * accumulate;
    const std::int64_t group_size = std::min(accumulate, state.steps_per_epoch - group_begin);
    const std::int64_t micro = index - group_begin;
    group_ended = micro == group_size - 1;
    const bool holds_last_batch = group_begin + group_size == state.steps_per_epoch;
    const std::int64_t group_samples = group_size * loader_batch_ - (holds_last_batch ? loader_batch_ - last_batch : 0);
    const MixedBatch mixed = extras_.mixer ? extras_.mixer->mix(*batch, state.epoch, index)
                                           : MixedBatch{*batch, batch->targets};
    // One step for the loader's batch, or (after an out-of-memory halving) several smaller ones.
    for (std::int64_t begin = 0; begin < n;) {
      const std::int64_t size = state.step_batch > 0 ? std::min(state.step_batch, n - begin) : n;
      const data::Batch part = size == n ? mixed.batch : mixed.batch.narrow(begin, size);
      const at::Tensor counted = size == n ? mixed.hard_targets : mixed.hard_targets.narrow(0, begin, size);
      StepOutput out;
      bool stepped = true;  // this part ended with an optimizer step
      if (accumulate == 1) {
        const double position = double(state.planned_step) + double(begin) / double(n);
        const double batch_factor =
            state.step_batch > 0 ? lr_scaling_factor(config_.lr_scaling, double(state.step_batch) / double(loader_batch_))
                                 : 1.0;
        state.lr = scheduled_lr(config_, base_lr_, position, schedule_steps_per_epoch) * batch_factor;
        if (!try_step(part, state, out)) continue;  // halved: these samples again, in smaller steps
      } else {
        if (micro == 0) state.lr = scheduled_lr(config_, base_lr_, double(state.planned_step), schedule_steps_per_epoch);
        // Each micro-batch's mean loss weighs its share of the group's samples.
        MicroStep step{double(size) / double(group_samples), micro == 0, group_ended};
        step.index = int(micro);
        step.count = int(group_size);
        step.full = group_samples == accumulate * loader_batch_ && state.step_batch <= 0;
        out = micro_step(part, step, state);
        stepped = step.last;
      }
      begin += size;
      if (stepped) {
        ++state.step;
        strategy_.note_step(state.step);
        if (out.skipped) {  // train.on_nonfinite = "skip_step": this step changed nothing
          ++state.nonfinite_skipped;
          if (accumulate > 1) {  // nor do its micro-batches count
            pending_loss.zero_();
            pending_statistics.zero_();
            pending_seen = 0;
            recorded.clear();
          }
          continue;
        }
        if (extras_.ema) extras_.ema->update(state.step);
      }
      if (accumulate == 1) {
        count(out, counted, size, /*into_pending=*/false);
      } else {
        if (out.loss.defined())
          count(out, counted, size, /*into_pending=*/true);
        else
          recorded.push_back({counted, size, int(micro)});
        if (stepped) {
          for (const RecordedPart& part : recorded)
            count(step_.recorded_micro_output(part.micro), part.counted, part.size, /*into_pending=*/true);
          recorded.clear();
          at::NoGradGuard no_grad;
          loss_sum.add_(pending_loss);
          statistics.add_(pending_statistics);
          seen += pending_seen;
          pending_loss.zero_();
          pending_statistics.zero_();
          pending_seen = 0;
        }
      }
      interval_samples += size * processes;
      state.epoch_samples = (seen - carried_seen) * processes;
      if (!stepped) continue;

      for (auto& c : callbacks_) c->on_step_end(state, out.loss);
      if (log_interval > 0 && state.step % log_interval == 0) {
        logged = true;
        const double elapsed = seconds_since(interval_start);  // before item(), which waits for the device
        const StepFigures figures{out.loss.item<double>(), state.lr, interval_samples / elapsed};
        if (stops_on_nonfinite_ && !std::isfinite(figures.loss)) stop_for_nonfinite(figures.loss, state, "by");
        for (auto& c : callbacks_) c->on_log_step(state, figures);
        interval_start = Clock::now();
        interval_samples = 0;
      }
    }
    const bool timed = timer_.timing() && !device_.device.is_cpu();  // synchronised to time it
    timer_.end_step();
    syncs_.end_step(++steps_trained > 2 && !logged && !timed && state.checkpoints_written == checkpoints_before);
    if (!group_ended) continue;  // nothing stops a run between the micro-batches of a step
    ++state.planned_step;
    if (config_.max_steps > 0 && state.planned_step >= config_.max_steps) {
      state.request_stop(StopReason::max_steps);
      break;
    }
    if (state.step_in_epoch < state.steps_per_epoch && strategy_.stop_question_due(state.step) &&
        strategy_.agree_to_stop(interrupt_requested())) {
      // Finish this step, record where we are inside the epoch, and stop.
      const EpochTotals partial = totals();
      state.sampler.batches_done = state.step_in_epoch;
      state.partial_sums.loss_sum = partial.loss_sum;
      state.partial_sums.statistics = partial.statistics;
      state.partial_sums.seen = static_cast<std::int64_t>(partial.seen);
      state.request_stop(StopReason::interrupted, std::string(interrupt_signal_name()) + " received");
      return partial;
    }
  }
  EpochTotals epoch = totals();
  epoch.host_syncs = syncs_.end_epoch();
  if (stops_on_nonfinite_ && !std::isfinite(epoch.loss_sum)) stop_for_nonfinite(epoch.loss_sum, state, "by");
  return epoch;
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

StepOutput EpochLoop::micro_step(const data::Batch& batch, const MicroStep& micro, LoopState& state) {
  try {
    return step_.run_micro(batch, state.lr, micro, &timer_);
  } catch (const c10::OutOfMemoryError& error) {
    // Part of the step's gradients may already be summed: the batch cannot be retried smaller.
    throw Error("out of memory at step " + std::to_string(state.step + 1) + " (epoch " + std::to_string(state.epoch) +
                ") in a micro-batch of " + std::to_string(batch.targets.size(0)) +
                " samples; with train.accumulate_steps the batch is not halved: lower data.batch_size and raise "
                "train.accumulate_steps to keep the effective batch (" + first_line(error.what()) + ")");
  }
}

bool EpochLoop::try_step(const data::Batch& batch, LoopState& state, StepOutput& out) {
  try {
    out = step_.run(batch, state.lr, &timer_);
    return true;
  } catch (const c10::OutOfMemoryError& error) {
    halve_step_batch(first_line(error.what()), state);
    return false;
  }
}

void EpochLoop::halve_step_batch(const std::string& error, LoopState& state) {
  const std::int64_t from = state.step_batch > 0 ? state.step_batch : loader_batch_;
  tried_.push_back(from);
  std::vector<std::string> tried;
  for (auto b : tried_) tried.push_back(std::to_string(b));
  const std::string where = "out of memory at step " + std::to_string(state.step + 1) + " (epoch " +
                            std::to_string(state.epoch) + ") with " + std::to_string(from) +
                            " samples per step (tried " + join(tried) + ")";
  // Every rank of a ddp run must step on the same batch; one rank cannot halve alone.
  if (strategy_.processes() > 1)
    throw Error(where + "; with " + std::to_string(strategy_.processes()) +
                " processes the batch cannot change on one of them: lower data.batch_size or use "
                "data.batch_size = \"auto\" (" + error + ")");
  const std::int64_t to = from / 2;
  if (to < std::max<std::int64_t>(1, config_.min_batch_size))
    throw Error(where + "; " + std::to_string(to) + " would be below data.min_batch_size = " +
                std::to_string(std::max<std::int64_t>(1, config_.min_batch_size)) + " (" + error + ")");
  if (device_.release_cached_memory) device_.release_cached_memory();
  BatchHalving h;
  h.epoch = state.epoch;
  h.step = state.step + 1;
  h.from = from;
  h.to = to;
  h.lr_before = state.lr;
  h.lr_after = state.lr * lr_scaling_factor(config_.lr_scaling, double(to) / double(from));
  h.error = error;
  state.step_batch = to;
  state.halvings.push_back(h);
  for (auto& c : callbacks_) c->on_batch_halved(state, h);
}

}  // namespace plugtrain
