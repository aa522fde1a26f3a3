// What the training loop needs from an experiment, and nothing more: the plan and build stages
// make it (loop_config()), the Trainer and EpochLoop read only this. A loop feature reads a new
// field here; it never reaches back into the user's Experiment.
#pragma once

#include <cstdint>
#include <string>

#include "config/experiment.h"

namespace plugtrain {

struct LoopConfig {
  std::int64_t epochs = 10;
  std::int64_t max_steps = 0;        // 0: no limit
  std::int64_t steps_per_epoch = 0;  // batches an epoch takes (0: all)
  std::int64_t log_interval = 100;   // steps between logged steps (0: never)
  std::int64_t eval_every = 1;       // epochs between evaluations (the last always)
  std::int64_t test_every = 0;       // with a validation split: epochs between test evaluations (0: at the end)
  std::int64_t accumulate_steps = 1; // micro-batches per optimizer step
  double ema_decay = 0;              // 0: no EMA of the weights
  bool ema_warmup = true;
  bool ema_evaluate = true;          // evaluation uses the EMA weights
  std::int64_t swa_start = 0;        // SWA from this epoch on (0: off)
  double swa_lr = 0;                 // its constant learning rate (0: the schedule's)
  double mixup_alpha = 0, cutmix_alpha = 0, mixup_prob = 1, mixup_switch_prob = 0.5;
  std::int64_t test_batch_size = 1000;
  std::int64_t min_batch_size = 1;   // out-of-memory halving goes no lower
  std::uint64_t seed = 0;            // shuffling and augmentation
  bool shuffle = true;               // false: the training samples in order every epoch (data.shuffle)
  bool phase_timing = true;
  PrecisionMode precision = PrecisionMode::fp32;
  OnNonfinite on_nonfinite = OnNonfinite::stop;
  double grad_clip = 0;              // 0: off
  LrScaling lr_scaling = LrScaling::none;  // for a batch an out-of-memory halving changed
  ScheduleConfig schedule;
  AugmentConfig augment;             // what the training loader applies per sample
  std::string model_name;            // stored in checkpoints
  std::int64_t pause_after_epoch = 0;  // > 0: pause (resumably) once this many epochs are done
};

LoopConfig loop_config(const Experiment& e);

}  // namespace plugtrain
