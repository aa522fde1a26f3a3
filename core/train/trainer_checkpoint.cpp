// The trainer's checkpoints (train/trainer.h): which parts of it are saved, a resume that
// restores them (the EMA's and SWA's averages too) and refuses a run with nothing left to train,
// and the checkpoint written with the optimizer's state read from the host.
#include <map>

#include "checkpoint/checkpoint.h"
#include "optim/fused_optimizers.h"
#include "optim/optimizer_state_on_host.h"
#include "optim/optimizers.h"
#include "strategy/training_strategy.h"
#include "train/epoch_record.h"
#include "train/model_ema.h"
#include "train/swa.h"
#include "train/trainer.h"

namespace plugtrain {

std::vector<Stateful*> Trainer::stateful_parts() {
  std::vector<Stateful*> parts{&state_, &state_.sampler, &state_.partial_sums, &history_, parts_.precision.get()};
  if (swa_) parts.push_back(swa_.get());
  for (auto& c : parts_.callbacks)
    if (auto* stateful = dynamic_cast<Stateful*>(c.get())) parts.push_back(stateful);
  return parts;
}

void Trainer::restore() {
  const std::filesystem::path& from = parts_.resume_from;
  if (from.empty()) return;
  CheckpointContent content;
  parts_.strategy->load_through(*parts_.optimizer, [&](torch::optim::Optimizer& optimizer) {
    content = load_checkpoint(from, *parts_.model, optimizer, parts_.device.device);
  });
  const CheckpointState& saved = content.state;
  // An average the checkpoint lacks (its run had none) starts again from the weights it holds.
  auto restore_average = [&](WeightAverage& average, const char* record) {
    const auto saved = content.averages.find(record);
    if (saved == content.averages.end()) return average.reset();
    try {
      average.load(saved->second);
    } catch (const Error& e) {
      throw CheckpointError(from.string() + ": " + record + ": " + e.what());
    }
  };
  if (ema_) restore_average(ema_->average(), "ema");
  if (swa_) restore_average(swa_->average(), "swa");
  if (!saved.find(state_.state_name()))
    throw CheckpointError(from.string() + ": checkpoint has no '" + state_.state_name() + "' section");
  try {
    load_parts(saved, stateful_parts());
  } catch (const CheckpointError& e) {
    throw CheckpointError(from.string() + ": " + e.what());
  }
  const bool finished = state_.finished;
  if (finished && !parts_.finished_checkpoint_is_done)
    throw CheckpointError(from.string() + ": that run ended by early stopping or max_steps after epoch " +
                          std::to_string(state_.epochs_done) + "; there is nothing to resume");
  const bool all_epochs_done = state_.epochs_done >= state_.epochs && state_.sampler.batches_done == 0;
  if ((finished || all_epochs_done) && parts_.finished_checkpoint_is_done) {
    // A restart after the run's end: nothing to train (max_steps stops again by itself).
    summary_.already_ended = true;
    const std::int64_t max_steps = parts_.loop.max_steps;
    if (finished && !(max_steps > 0 && state_.planned_step >= max_steps)) state_.request_stop(StopReason::early_stopping);
    const std::vector<TaskMetric>& metrics = parts_.task->metrics(TaskPass::evaluation);
    if (auto test = last_figures(summary_.earlier_epochs_json, metrics, "test")) {
      summary_.final_test_loss = test->first;
      summary_.final_test = test->second;
    }
    if (auto val = last_figures(summary_.earlier_epochs_json, metrics, "val")) {
      summary_.final_val_loss = val->first;
      summary_.final_val = val->second;
    }
  } else if (all_epochs_done)
    throw CheckpointError(from.string() + ": that run already trained all " + std::to_string(state_.epochs_done) +
                          " epochs; raise train.epochs to train further");
  state_.resumed_from = from;
  summary_.resumed = {from, state_.epochs_done, state_.step, state_.sampler.batches_done};
  first_epoch_ = state_.epochs_done + 1;
}

void Trainer::save_checkpoint(const std::filesystem::path& path) {
  CheckpointState sections;
  save_parts(sections, stateful_parts());
  std::map<std::string, NamedTensors> averages;
  if (ema_) averages["ema"] = ema_->average().named_weights();
  if (swa_) averages["swa"] = swa_->average().named_weights();
  // Steps replayed from a graph or skipped on the device moved only the device's step counts.
  if (Result<ReplayableOptimizer*> r = replayable(*parts_.optimizer)) r.value()->sync_host_steps();
  // fsdp: the model and the optimizer's state gathered whole (every rank takes part), written by rank 0.
  parts_.strategy->save_through(*parts_.optimizer, [&](torch::optim::Optimizer& optimizer) {
    with_optimizer_state_on_host(optimizer, [&] {
      plugtrain::save_checkpoint(path, *parts_.model, optimizer,
                                 {sections, parts_.experiment_record, parts_.loop.model_name, "", "", averages},
                                 parts_.device.device);
    });
  });
}

}  // namespace plugtrain
