#include "train/trainer.h"

#include <algorithm>
#include <map>

#include <ATen/ATen.h>
#include <torch/optim/optimizer.h>

#include "checkpoint/checkpoint.h"
#include "data/from_experiment.h"
#include "optim/fused_optimizers.h"
#include "optim/optimizer_state_on_host.h"
#include "optim/optimizers.h"
#include "process/interrupt.h"
#include "strategy/single_device.h"
#include "task/task_registry.h"
#include "train/batch_mixer.h"
#include "train/epoch_loop.h"
#include "train/epoch_record.h"
#include "train/evaluate.h"
#include "train/graph_step.h"
#include "train/model_ema.h"
#include "train/state_bytes.h"
#include "train/step_timer.h"
#include "train/swa.h"
#include "train/train_step.h"
#include "util/clock.h"

namespace plugtrain {

TrainerParts::TrainerParts() = default;
TrainerParts::TrainerParts(TrainerParts&&) noexcept = default;
TrainerParts::~TrainerParts() = default;

TrainerParts single_device_parts(const Experiment& experiment, std::shared_ptr<Model> model,
                                 const data::DatasetPair& data, DeviceContext device) {
  TrainerParts parts;
  parts.loop = loop_config(experiment);
  parts.batch_size = experiment.data.batch_size.value_or(0);
  parts.lr = experiment.optim.lr;
  parts.optimizer = make_optimizer(experiment, experiment.optim.lr, model->parameters());
  parts.precision = std::make_unique<Precision>(experiment.train.precision, device.device);
  parts.strategy = std::make_unique<SingleDevice>(*model);
  parts.model = std::move(model);
  parts.data = &data;
  parts.device = std::move(device);
  return parts;
}

Trainer::Trainer(TrainerParts parts)
    : parts_(std::move(parts)),
      history_(
          "history",
          [this](StateSection& out) {
            out.put_text("epochs_json", epoch_history(summary_.earlier_epochs_json, summary_.epochs));
            out.put_real("best_test_accuracy", best_selected_.value());  // the headline metric's (named before tasks)
            out.put_int("best_test_epoch", best_selected_.epoch());
          },
          [this](const StateSection& in) {
            summary_.earlier_epochs_json = in.text_at("epochs_json");
            const double best = in.real_at("best_test_accuracy");
            const std::int64_t epoch = in.int_at("best_test_epoch");
            best_selected_.restore(epoch > 0, best, epoch);
            summary_.best_selected = best;
          }) {
  if (!parts_.task) {
    const TaskDefinition& classification = *find_task("classification");
    parts_.task = classification.factory({parts_.data->train.num_classes, {}, parts_.data->train.class_names},
                                         default_options(classification));
  }
  parts_.task->to(parts_.device.device);
  summary_.headline = parts_.task->headline();
  summary_.selection_split = parts_.data->has_val() ? "val" : "test";
  summary_.test_is_val = parts_.data->test_is_val;
  const LoopConfig& c = parts_.loop;
  if (c.ema_decay > 0) ema_ = std::make_unique<ModelEma>(*parts_.model, c.ema_decay, c.ema_warmup);
  summary_.ema_evaluated = ema_ && c.ema_evaluate;
  if (c.swa_start > 0) swa_ = std::make_unique<StochasticWeightAverage>(*parts_.model, c.swa_start);
  const MixSettings mix{c.mixup_alpha, c.cutmix_alpha, c.mixup_prob, c.mixup_switch_prob,
                        parts_.data->train.num_classes, c.seed};
  if (mix.enabled()) mixer_ = std::make_unique<BatchMixer>(mix);
}
Trainer::~Trainer() = default;

std::unique_ptr<data::BatchLoader> Trainer::make_loader(std::int64_t batch_size) const {
  auto loader = std::make_unique<data::BatchLoader>(
      parts_.data->train, batch_size, parts_.loop.shuffle, data::augment_options(parts_.loop.augment),
      parts_.device.loader, parts_.device.device, parts_.loop.seed, parts_.strategy->shard(/*pad=*/true),
      parts_.device.memory_format, parts_.device.train_on_device);
  loader->limit_batches(parts_.loop.steps_per_epoch);
  return loader;
}

std::unique_ptr<TrainStep> Trainer::make_step(bool skip_nonfinite) {
  const std::vector<at::Tensor> parameters = parts_.strategy->stepped_parameters(parts_.model->parameters()).tensors;
  const double grad_clip = parts_.loop.grad_clip;
  step_fallback_.clear();
  if (parts_.make_graph_capture) {
    // The plan decided for float32 parameters on one device; a model whose parameters are not
    // got the foreach form, which is refused here as a recording the device refuses would be.
    Result<ReplayableOptimizer*> replayable_optimizer = replayable(*parts_.optimizer);
    if (!replayable_optimizer && !parts_.graph_fallback)
      throw Error("train.graphs = true, but " + replayable_optimizer.why_not());
    if (replayable_optimizer) {
      // Several processes: the optimizer step is a second recording (graph_step.h).
      std::unique_ptr<GraphCapture> second =
          parts_.strategy->processes() > 1 ? parts_.make_graph_capture() : nullptr;
      return std::make_unique<GraphStep>(*parts_.strategy, *parts_.precision, *parts_.optimizer, *parts_.task,
                                         *replayable_optimizer.value(),
                                         parameters, grad_clip, parts_.make_graph_capture(), parts_.graph_fallback,
                                         /*warm_up_steps=*/3, std::move(second));
    }
    step_fallback_ = replayable_optimizer.why_not();
  }
  return std::make_unique<TrainStep>(*parts_.strategy, *parts_.precision, *parts_.optimizer, *parts_.task, parameters,
                                     grad_clip, skip_nonfinite);
}

std::unique_ptr<StepTimer> Trainer::step_timer(std::int64_t batch_size) {
  std::unique_ptr<data::BatchLoader> batches = make_loader(batch_size > 0 ? batch_size : parts_.batch_size);
  std::unique_ptr<TrainStep> step = make_step(/*skip_nonfinite=*/false);
  batches->defer_device_gathers(step->gathers_in_recording());  // as the epoch loop does
  parts_.strategy->prepare();
  parts_.model->train();
  return std::make_unique<StepTimer>(std::move(batches), std::move(step), parts_.lr, parts_.device.device);
}

std::vector<double> Trainer::time_steps(std::int64_t steps, std::int64_t batch_size, bool synchronise_each) {
  return step_timer(batch_size)->time(steps, synchronise_each);
}

TrainSummary Trainer::fit() {
  const LoopConfig& c = parts_.loop;
  TrainingStrategy& strategy = *parts_.strategy;
  const std::unique_ptr<data::BatchLoader> loader = make_loader(parts_.batch_size);
  data::BatchLoader& batches = *loader;
  const std::unique_ptr<TrainStep> step = make_step(c.on_nonfinite == OnNonfinite::skip_step);
  EpochLoop epoch_loop(c, parts_.lr, parts_.batch_size, batches, *step, strategy, parts_.device, parts_.callbacks,
                       *parts_.task, StepExtras{mixer_.get(), ema_.get()});
  state_.epochs = c.epochs;
  state_.steps_per_epoch = batches.batches_per_epoch();
  state_.lr = parts_.lr;
  state_.save_checkpoint = [this](const std::filesystem::path& path) {
    save_checkpoint(path);
    state_.last_checkpoint = path;
    ++state_.checkpoints_written;
  };
  best_selected_ = BestSoFar(/*maximise=*/summary_.headline.goal == MetricGoal::maximize);

  restore();
  strategy.prepare();  // ddp: rank 0's weights everywhere, then gradients averaged during backward
  for (auto& c : parts_.callbacks) c->on_train_start(state_);
  const auto run_start = Clock::now();
  while (!done())
    if (!train_epoch(epoch_loop)) break;  // interrupted mid-epoch: no epoch figures
  // Ended by early stopping or max_steps: --resume says so instead of training on.
  if (state_.stop == StopReason::max_steps || state_.stop == StopReason::early_stopping) state_.finished = true;
  test_after_the_end();
  for (auto& c : parts_.callbacks) c->on_train_end(state_);
  summarize_the_end(*step, run_start);
  return summary_;
}

bool Trainer::train_epoch(EpochLoop& epoch_loop) {
  const auto epoch_start = Clock::now();
  ++state_.epoch;
  parts_.model->train();
  const EpochTotals totals = epoch_loop.run(state_);
  if (state_.stop == StopReason::interrupted) return false;
  const std::uint64_t waits_before = parts_.device.host_waits ? parts_.device.host_waits() : 0;
  EpochMetrics m = finish_epoch(totals);
  m.host_syncs = totals.host_syncs;
  if (m.host_syncs.counted) m.host_syncs.evaluation = parts_.device.host_waits() - waits_before;
  m.seconds = seconds_since(epoch_start);
  if (parts_.device.memory) m.memory = parts_.device.memory();
  summary_.epochs.push_back(std::move(m));  // before the callbacks: the epoch's checkpoint lists it
  for (auto& c : parts_.callbacks) c->on_epoch_end(state_, summary_.epochs.back());
  return true;
}

// With a validation split the test set is evaluated once the run has ended, on its final
// weights (unless the last epoch already did, or the run only paused or was interrupted).
void Trainer::test_after_the_end() {
  const bool ended = state_.stop != StopReason::interrupted && state_.stop != StopReason::paused;
  if (!parts_.data->has_val() || !ended || summary_.already_ended || state_.epochs_done == 0 ||
      summary_.tested_epoch == state_.epochs_done)
    return;
  test_now(summary_.epochs.empty() ? nullptr : &summary_.epochs.back());
  if (!summary_.epochs.empty())
    for (auto& c : parts_.callbacks) c->on_late_test(state_, summary_.epochs.back());
}

void Trainer::summarize_the_end(const TrainStep& step, Clock::time_point run_start) {
  // A pause is an interruption asked for in advance: the same checkpoint, resumed the same way.
  summary_.paused = state_.stop == StopReason::paused;
  summary_.interrupted = state_.stop == StopReason::interrupted || summary_.paused;
  summary_.stopped_early = state_.stop == StopReason::early_stopping;
  if (summary_.interrupted || summary_.stopped_early) summary_.stop_reason = state_.stop_message;
  summary_.steps = state_.step;
  summary_.skipped_steps = parts_.precision->skipped_steps();
  summary_.halvings = state_.halvings;
  summary_.nonfinite_skipped_steps = state_.nonfinite_skipped;
  summary_.step_batch = state_.step_batch > 0 ? state_.step_batch : parts_.batch_size;
  summary_.graph_fallback = step_fallback_;
  if (const auto* graph_step = dynamic_cast<const GraphStep*>(&step)) {
    summary_.graph_replays = graph_step->replays();
    summary_.graph_fallback = graph_step->fallback_reason();
  }
  summary_.best_selected = best_selected_.value();
  summary_.best_epoch = best_selected_.epoch();
  summary_.total_seconds = seconds_since(run_start);
  summary_.samples_per_second = train_seconds_ > 0 ? double(train_samples_) / train_seconds_ : 0;
  const std::vector<at::Tensor> parameters = parts_.model->parameters();
  summary_.strategy = parts_.strategy->name();
  summary_.state_bytes =
      training_state_bytes(parameters, parts_.strategy->stepped_parameters(parameters).tensors, *parts_.optimizer);
  summary_.sharding = parts_.strategy->sharding();
}

// Every reason to stop, in one place. The epoch loop requests the ones that come mid-epoch
// (max_steps, an interrupt) and the early-stopping callback its own; the rest is decided here.
bool Trainer::done() {
  if (state_.stopping()) return true;
  if (state_.epochs_done >= state_.epochs) {
    state_.request_stop(StopReason::epochs_done);
    return true;
  }
  const std::int64_t pause = parts_.loop.pause_after_epoch;
  if (pause > 0 && state_.epochs_done >= pause) {
    state_.request_stop(StopReason::paused, "paused after epoch " + std::to_string(state_.epochs_done) + " of " +
                                                std::to_string(state_.epochs) + " (--stop-after-epoch)");
    return true;
  }
  const std::int64_t max_steps = parts_.loop.max_steps;
  if (max_steps > 0 && state_.planned_step >= max_steps) {
    state_.request_stop(StopReason::max_steps);
    return true;
  }
  // A SIGINT/SIGTERM during an epoch's last step or its evaluation: that epoch's checkpoint is
  // the place to resume from. (Before this fit's first epoch the epoch loop asks after a step.)
  if (state_.epoch >= first_epoch_ && parts_.strategy->agree_to_stop(interrupt_requested())) {
    state_.request_stop(StopReason::interrupted, std::string(interrupt_signal_name()) + " received");
    return true;
  }
  return false;
}

}  // namespace plugtrain
