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
#include "train/optimizers.h"
#include "train/precision.h"
#include "train/train_step.h"
#include "util/error.h"
#include "util/interrupt.h"
#include "util/text.h"

namespace plugtrain {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

}  // namespace

EpochLoop::EpochLoop(const LoopConfig& config, double base_lr, std::int64_t loader_batch,
                     data::BatchLoader& batches, TrainStep& step, TrainingStrategy& strategy,
                     const DeviceContext& device, std::vector<std::unique_ptr<Callback>>& callbacks, const Task& task)
    : config_(config),
      base_lr_(base_lr),
      loader_batch_(loader_batch),
      batches_(batches),
      step_(step),
      strategy_(strategy),
      device_(device),
      callbacks_(callbacks),
      task_(task),
      timer_(device.device, config.phase_timing),
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

  auto interval_start = Clock::now();
  std::int64_t interval_samples = 0;
  const std::int64_t log_interval = config_.log_interval;
  timer_.take();  // a new epoch's figures
  for (;;) {
    timer_.start_step(state.step);
    const std::optional<data::Batch> batch = batches_.next();
    if (!batch) break;
    timer_.mark(Phase::data);
    timer_.add(Phase::copy, batches_.last_copy_seconds(), Phase::data);
    const std::int64_t n = batch->targets.size(0);
    ++state.step_in_epoch;  // the batch in hand counts, for the callbacks
    // One step for the loader's batch, or (after an out-of-memory halving) several smaller ones.
    for (std::int64_t begin = 0; begin < n;) {
      const std::int64_t size = state.step_batch > 0 ? std::min(state.step_batch, n - begin) : n;
      const data::Batch part = size == n ? *batch : batch->narrow(begin, size);
      const double position = double(state.planned_step) + double(begin) / double(n);
      const double batch_factor =
          state.step_batch > 0 ? lr_scaling_factor(config_.lr_scaling, double(state.step_batch) / double(loader_batch_))
                               : 1.0;
      state.lr = scheduled_lr(config_, base_lr_, position, state.steps_per_epoch) * batch_factor;
      StepOutput out;
      if (!try_step(part, state, out)) continue;  // halved: these samples again, in smaller steps
      begin += size;
      ++state.step;
      strategy_.note_step(state.step);
      if (out.skipped) {  // train.on_nonfinite = "skip_step": this batch changed nothing
        ++state.nonfinite_skipped;
        continue;
      }
      // On the host CPU the loss is at hand: it is checked every step, by one read (cheaper
      // than an isfinite kernel and its read; elsewhere that would synchronise the device each
      // step: it is checked when the loss is read anyway).
      if (stops_on_nonfinite_ && device_.device.is_cpu()) {
        const double loss = out.loss.item<double>();
        if (!std::isfinite(loss)) stop_for_nonfinite(loss, state, "at");
      }
      {
        // As few small ops as possible: each costs a dispatch on the hot path.
        at::NoGradGuard no_grad;
        loss_sum.add_(out.loss.detach(), double(size));
        if (out.more.empty()) {
          statistics.add_(task_.statistics(Pass::training, out.logits.detach(), part.targets));
        } else {
          TensorMap more;
          for (const auto& [name, t] : out.more) more[name] = t.detach();
          statistics.add_(task_.statistics(Pass::training, out.logits.detach(), part.targets, more));
        }
      }
      seen += size;
      interval_samples += size * processes;
      state.epoch_samples = (seen - carried_seen) * processes;

      for (auto& c : callbacks_) c->on_step_end(state, out.loss);
      if (log_interval > 0 && state.step % log_interval == 0) {
        const double elapsed = seconds_since(interval_start);  // before item(), which waits for the device
        const StepFigures figures{out.loss.item<double>(), state.lr, interval_samples / elapsed};
        if (stops_on_nonfinite_ && !std::isfinite(figures.loss)) stop_for_nonfinite(figures.loss, state, "by");
        for (auto& c : callbacks_) c->on_log_step(state, figures);
        interval_start = Clock::now();
        interval_samples = 0;
      }
    }
    ++state.planned_step;
    timer_.end_step();
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
  const EpochTotals epoch = totals();
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
