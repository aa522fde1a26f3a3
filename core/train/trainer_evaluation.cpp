// The fit loop's end of an epoch (train/trainer.h): the epoch's figures, which split is
// evaluated with which weights (the model's, the EMA's, SWA's average with its batch norm
// recomputed), and the test set's evaluation where a validation split selects instead of it.
#include <optional>

#include <ATen/ATen.h>

#include "data/batch_loader.h"
#include "train/epoch_loop.h"
#include "train/evaluate.h"
#include "train/model_ema.h"
#include "train/swa.h"
#include "train/trainer.h"

namespace plugtrain {

EpochMetrics Trainer::finish_epoch(const EpochTotals& totals) {
  EpochMetrics m;
  m.epoch = state_.epoch;
  m.lr = state_.lr;
  m.phases = totals.phases;
  m.train_loss = totals.seen > 0 ? totals.loss_sum / totals.seen : 0;
  m.train = parts_.task->metric_values(TaskPass::training, totals.statistics, totals.seen);
  m.samples = static_cast<std::int64_t>(totals.seen);
  // A resumed epoch's first part was trained (and timed) before.
  const double trained_now = totals.seen - double(state_.partial_sums.seen);
  m.samples_per_second = totals.seconds > 0 ? trained_now / totals.seconds : 0;
  train_seconds_ += totals.seconds;
  train_samples_ += static_cast<std::int64_t>(trained_now);
  state_.partial_sums = EpochSums();

  const bool run_ends = state_.stop == StopReason::max_steps || state_.epoch == state_.epochs;
  if (swa_) {
    swa_->after_epoch(state_.epoch);
    summary_.swa_epochs = swa_->count();
    // The run ends with the average: it becomes the model's weights, with its batch norm, so
    // the last checkpoint, the final figures and an export are the average's.
    if (run_ends && swa_->count() > 0) {
      swa_->average().swap_in();
      recompute_swa_batch_norm();
      swa_applied_ = true;
    }
  }
  // A pause evaluates too: a sweep's rung ranks the trials by what the paused epoch scored.
  const bool last = run_ends || state_.epoch == parts_.loop.pause_after_epoch;
  const bool has_val = parts_.data->has_val();
  std::optional<Evaluation> selecting;
  if (last || state_.epoch % parts_.loop.eval_every == 0) {
    // The split that selects: validation where the run holds one out, else (as before
    // validation splits) the test set.
    const Evaluation& e = selecting.emplace(evaluate_split(has_val));
    if (has_val) {
      m.val_loss = e.loss;
      m.val = e.metrics;
      summary_.final_val = e.metrics;
      summary_.final_val_loss = e.loss;
    } else {
      m.test_loss = e.loss;
      m.test = e.metrics;
      summary_.final_test = e.metrics;
      summary_.final_per_class = e.per_class;
      summary_.final_test_loss = e.loss;
      summary_.tested_epoch = state_.epoch;
    }
    best_selected_.offer(e.metrics.front().value, state_.epoch);
  }
  const std::int64_t test_every = parts_.loop.test_every;
  if (has_val && (run_ends || (test_every > 0 && state_.epoch % test_every == 0))) {
    state_.epochs_done = state_.epoch;
    // Without test labels the test split is the val split just evaluated on the same weights.
    if (selecting && parts_.data->test_is_val)
      record_test(*selecting, &m);
    else
      test_now(&m);
  }
  state_.epochs_done = state_.epoch;  // as a checkpoint records it from now on
  return m;
}

Evaluation Trainer::evaluate_split(bool val) {
  DeviceContext device = parts_.device;
  if (val) device.test_on_device = parts_.device.val_on_device;  // what evaluate() reads from the device
  const data::Dataset& dataset = val ? parts_.data->val : parts_.data->test;
  auto run = [&] {
    return evaluate(*parts_.model, *parts_.strategy, *parts_.task, dataset, parts_.loop.test_batch_size, device,
                    *parts_.precision);
  };
  // The weights evaluated: SWA's average (its batch norm recomputed) once it has begun and
  // before the run ends with it, else the EMA where the run evaluates with it, else the model's.
  const bool swa = swa_ && swa_->count() > 0 && !swa_applied_;
  WeightAverage* average = swa ? &swa_->average() : ema_ && parts_.loop.ema_evaluate ? &ema_->average() : nullptr;
  if (!average) return run();
  average->swap_in();
  std::optional<BufferSnapshot> buffers;
  try {
    if (swa) {
      buffers.emplace(*parts_.model);
      recompute_swa_batch_norm();
    }
    Evaluation e = run();
    if (buffers) buffers->restore();
    average->swap_out();
    return e;
  } catch (...) {
    if (buffers) buffers->restore();
    average->swap_out();
    throw;
  }
}

void Trainer::recompute_swa_batch_norm() {
  data::BatchLoader batches(parts_.data->train, parts_.loop.test_batch_size, /*shuffle=*/false, data::AugmentOptions{},
                            parts_.device.loader, parts_.device.device, 0, parts_.strategy->shard(/*pad=*/false),
                            parts_.device.memory_format, nullptr);
  recompute_batch_norm(*parts_.model, batches);
}

void Trainer::test_now(EpochMetrics* row) { record_test(evaluate_split(/*val=*/false), row); }

void Trainer::record_test(const Evaluation& test, EpochMetrics* row) {
  summary_.final_test = test.metrics;
  summary_.final_per_class = test.per_class;
  summary_.final_test_loss = test.loss;
  summary_.tested_epoch = state_.epochs_done;
  if (!row) return;
  row->test_loss = test.loss;
  row->test = test.metrics;
}

}  // namespace plugtrain
