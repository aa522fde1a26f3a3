// The learning-rate schedule an experiment names, as a function of the optimizer step.
#pragma once

#include <cstdint>

#include "train/loop_config.h"

namespace plugtrain {

// Learning rate for optimizer step `step` (0-based), given the epoch length in steps:
// linear warm-up over warmup_steps (or warmup_epochs), then none / step / multistep / cosine /
// linear (per step); onecycle warms up by itself (pct_start). Steps are optimizer steps (with
// train.accumulate_steps, one per group of micro-batches).
// `position`: steps at the planned batch so far, fractional inside a batch that an
// out-of-memory halving split into several steps.
double scheduled_lr(const LoopConfig& c, double base_lr, double position, std::int64_t steps_per_epoch);

}  // namespace plugtrain
