// The batches of one epoch: each through the training step, running sums kept on the device,
// callbacks after every step, and the stops that can come mid-epoch (train.max_steps, an
// interrupt the processes agree on). Resuming mid-epoch replays the batches already trained on.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "config/experiment.h"
#include "data/batch_loader.h"
#include "train/callback.h"
#include "train/device_context.h"
#include "train/loop_state.h"
#include "train/phase_timer.h"

namespace plugtrain {

class TrainStep;
class TrainingStrategy;

// The epoch's totals over all processes, and its training time (evaluation excluded).
struct EpochTotals {
  double loss_sum = 0, correct = 0, seen = 0;
  double seconds = 0;
  PhaseTimes phases;  // this process's
};

class EpochLoop {
 public:
  // base_lr: the plan's learning rate, which the experiment's schedule shapes per step.
  EpochLoop(const Experiment& experiment, double base_lr, data::BatchLoader& batches, TrainStep& step,
            TrainingStrategy& strategy, const DeviceContext& device, std::vector<std::unique_ptr<Callback>>& callbacks);

  // Trains epoch state.epoch. Returns with state.stop set when max_steps or an interrupt ended
  // it early; an interrupted epoch leaves its partial sums in state.progress.
  EpochTotals run(LoopState& state);

 private:
  const Experiment& experiment_;
  double base_lr_;
  data::BatchLoader& batches_;
  TrainStep& step_;
  TrainingStrategy& strategy_;
  const DeviceContext& device_;
  std::vector<std::unique_ptr<Callback>>& callbacks_;
  PhaseTimer timer_;
};

}  // namespace plugtrain
