// The batches of one epoch: each through the training step, running sums kept on the device,
// callbacks after every step, and the stops that can come mid-epoch (train.max_steps, an
// interrupt the processes agree on). Resuming mid-epoch replays the batches already trained on.
//
// Out of device memory in a step (c10::OutOfMemoryError before the optimizer step): the
// device's cached memory is freed, the samples per step are halved, and the failed batch is
// trained again as steps of the smaller size; so is every later batch. Nothing already trained
// is lost, the loader and its order stay as they were, the learning rate follows the batch as
// optim.lr_scaling says, and the checkpoint records the new size. Below data.min_batch_size,
// or with several processes (each rank's batch must stay the same), the run stops instead.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "data/batch_loader.h"
#include "train/batch_halving.h"
#include "train/callback.h"
#include "train/device_context.h"
#include "train/host_sync_meter.h"
#include "train/loop_config.h"
#include "train/loop_state.h"
#include "train/phase_timer.h"
#include "train/running_sums.h"
#include "train/step_groups.h"

namespace plugtrain {

class BatchMixer;
class ModelEma;
class TrainStep;
class TrainingStrategy;
struct MicroStep;
struct StepOutput;

// What a step may do beside training: mix the batch (mixup, CutMix) before it, and update the
// EMA of the weights after each optimizer step. Null: not in this run.
struct StepExtras {
  const BatchMixer* mixer = nullptr;
  ModelEma* ema = nullptr;
};

// The epoch's totals over all processes, and its training time (evaluation excluded).
struct EpochTotals {
  double loss_sum = 0, seen = 0;
  std::vector<double> statistics;  // the task's training statistics
  double seconds = 0;
  PhaseTimes phases;  // this process's
  HostSyncFigures host_syncs;  // this process's
};

class EpochLoop {
 public:
  // base_lr: the plan's learning rate for loader_batch samples per step, which the
  // experiment's schedule shapes per step.
  EpochLoop(const LoopConfig& config, double base_lr, std::int64_t loader_batch, data::BatchLoader& batches,
            TrainStep& step, TrainingStrategy& strategy, const DeviceContext& device,
            std::vector<std::unique_ptr<Callback>>& callbacks, const Task& task, StepExtras extras = {});

  // Trains epoch state.epoch. Returns with state.stop set when max_steps or an interrupt ended
  // it early; an interrupted epoch leaves its position and sums in state.sampler
  // and state.partial_sums.
  EpochTotals run(LoopState& state);

 private:
  struct EpochProgress;
  void start_epoch(LoopState& state);
  // One loader batch: one optimizer step, several smaller ones after an out-of-memory halving,
  // or one micro-batch of an accumulated step.
  void train_batch(const data::Batch& batch, const StepGroup& group, LoopState& state, EpochProgress& progress);
  // A whole step on `part` at schedule position `position`; false when it ran out of memory and
  // the step batch was halved (batch_halving.h).
  bool whole_step(const data::Batch& part, double position, LoopState& state, const EpochProgress& progress,
                  StepOutput& out);
  // One micro-batch of an accumulated step (train.accumulate_steps > 1); out of memory stops.
  StepOutput accumulated_part(const data::Batch& part, const StepGroup& group, std::int64_t size, LoopState& state,
                              const EpochProgress& progress);
  // The step count, EMA, the running sums, the callbacks and the log after a part of a batch.
  void after_part(const StepOutput& out, const at::Tensor& counted, std::int64_t size, const StepGroup& group,
                  LoopState& state, EpochProgress& progress);
  void count(const StepOutput& out, const at::Tensor& counted, std::int64_t size, bool pending, const LoopState& state,
             EpochProgress& progress) const;
  void log_step(const StepOutput& out, LoopState& state, EpochProgress& progress);
  // train.max_steps reached, or an interrupt every process agrees to: the epoch stops here.
  bool stops_after_step(LoopState& state);
  EpochTotals interrupted(LoopState& state, const EpochProgress& progress);
  EpochTotals totals(const EpochProgress& progress);
  [[noreturn]] void stop_for_nonfinite(double loss, const LoopState& state, const char* at_or_by) const;

  const LoopConfig& config_;
  double base_lr_;
  std::int64_t loader_batch_;
  data::BatchLoader& batches_;
  TrainStep& step_;
  TrainingStrategy& strategy_;
  const DeviceContext& device_;
  std::vector<std::unique_ptr<Callback>>& callbacks_;
  const Task& task_;
  StepExtras extras_;
  PhaseTimer timer_;
  HostSyncMeter syncs_;
  BatchHalvingPolicy halving_;
  bool stops_on_nonfinite_;
  SumTensors sum_tensors_;  // where every epoch's running sums live (running_sums.h)
};

}  // namespace plugtrain
